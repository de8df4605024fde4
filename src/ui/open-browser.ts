import { spawn } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { dataHome } from "../util/data-dirs.js";
import { randomHex } from "../util/crypto.js";
import { makeDirs } from "../util/make-dirs.js";

/**
 * Opens `url` with the platform's opener, detached so the server's lifetime is not tied to the
 * browser. A missing opener (a server, a container) is not an error: the URL is printed anyway.
 *
 * The URL carries the page's token, and an opener's (or a new browser's) command line is readable
 * by every user of the machine: so the opener is given a private file that sends the browser on
 * to the URL, as Jupyter does. Returns what removes that file (once the server stops).
 */
export function openBrowser(url: string): () => void {
  const dir = path.join(dataHome(), "ui");
  const file = path.join(dir, `open-${randomHex(8)}.html`);
  try {
    makeDirs(dir);
    writeFileSync(file, redirectPage(url), { mode: 0o600 });
  } catch {
    return () => {}; // no private file: the printed URL is the way in
  }
  const target = pathToFileURL(file).href;
  const [command, args] =
    process.platform === "darwin"
      ? ["open", [target]]
      : process.platform === "win32"
        ? ["cmd", ["/c", "start", "", target]]
        : ["xdg-open", [target]];
  try {
    const child = spawn(command, args, { detached: true, stdio: "ignore", windowsHide: true });
    child.on("error", () => {});
    child.unref();
  } catch {
    // no opener: the printed URL is the way in
  }
  return () => rmSync(file, { force: true });
}

function redirectPage(url: string): string {
  // The URL is ours (127.0.0.1, a port, a hex token): nothing in it needs escaping.
  return `<!doctype html>
<html><head><meta charset="utf-8"><meta http-equiv="refresh" content="0;url=${url}">
<title>ghostcommit</title></head>
<body><p>Opening the <a href="${url}">ghostcommit timeline</a>…</p></body></html>
`;
}
