/**
 * Parses JSON with comments (`//`, `/* *\/`) and trailing commas, as Gemini CLI reads its
 * settings.json (and editors write such files). For reading only: `install` never rewrites such a
 * file, which would lose the comments. Throws as JSON.parse does on anything else.
 */
export function parseJsonc(text: string): unknown {
  let out = "";
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === '"') {
      // A string, escapes and all: nothing in it is a comment or a comma to drop.
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j + 1;
    } else if (c === "/" && (text[i + 1] === "/" || text[i + 1] === "*")) {
      i = afterComment(text, i);
      out += " ";
    } else {
      // A comma whose next token closes an object or array is a trailing one.
      if (c !== "," || !"}]".includes(text[afterTrivia(text, i + 1)] ?? "")) out += c;
      i++;
    }
  }
  return JSON.parse(out);
}

function afterComment(text: string, at: number): number {
  if (text[at + 1] === "/") {
    const end = text.indexOf("\n", at);
    return end === -1 ? text.length : end;
  }
  const end = text.indexOf("*/", at + 2);
  if (end === -1) throw new SyntaxError("unterminated comment");
  return end + 2;
}

function afterTrivia(text: string, at: number): number {
  let i = at;
  while (i < text.length) {
    if (/\s/.test(text[i])) i++;
    else if (text[i] === "/" && (text[i + 1] === "/" || text[i + 1] === "*")) i = afterComment(text, i);
    else break;
  }
  return i;
}
