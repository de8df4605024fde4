/**
 * What ghostcommit has to tell the person using it as it happens (a Watchman watch it started and
 * leaves running). On stderr by default, which a terminal shows; an agent's hook or an MCP tool
 * call collects them instead (agents keep a hook's or a server's stderr out of sight) and puts
 * them in its answer.
 */
const collectors = new Set<string[]>();

export function announce(text: string): void {
  const line = `ghostcommit: ${text}`;
  if (collectors.size === 0) process.stderr.write(`${line}\n`);
  // Calls served at once (an MCP server's) each hear it: a repeat beats a notice lost.
  for (const into of collectors) into.push(line);
}

/**
 * Sends announcements (each a line "ghostcommit: …") into `into` instead of stderr until the
 * returned function is called.
 */
export function collectAnnouncements(into: string[]): () => void {
  collectors.add(into);
  return () => {
    collectors.delete(into);
  };
}
