/**
 * Where a JSON text fails to parse, for a person fixing it by hand: " (line 3, column 3: …)" from
 * the position V8's message gives, or "" when it names none. A byte order mark is said instead
 * (no editor shows it, so the file looks valid).
 */
export function whereJsonFails(text: string, error: unknown): string {
  if (text.startsWith("\uFEFF"))
    return " (it starts with a byte order mark, U+FEFF, which JSON does not allow and most editors do not show: save it as UTF-8 without one)";
  const message = error instanceof Error ? error.message : "";
  const at = /at position (\d+)/.exec(message);
  const reason = message
    .replace(/ in JSON at position \d+.*$/s, "")
    .replace(/^Unexpected end of JSON input$/, "it ends too soon");
  if (!at) return reason === "it ends too soon" ? ` (${reason})` : "";
  const before = text.slice(0, Number(at[1]));
  const line = before.split("\n").length;
  const column = before.length - before.lastIndexOf("\n");
  return ` (line ${line}, column ${column}: ${reason.charAt(0).toLowerCase()}${reason.slice(1)})`;
}
