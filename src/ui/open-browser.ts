import { spawn } from "node:child_process";

/**
 * Opens `url` with the platform's opener, detached so the server's lifetime is not tied to the
 * browser. A missing opener (a server, a container) is not an error: the URL is printed anyway.
 */
export function openBrowser(url: string): void {
  const [command, args] =
    process.platform === "darwin"
      ? ["open", [url]]
      : process.platform === "win32"
        ? ["cmd", ["/c", "start", "", url]]
        : ["xdg-open", [url]];
  try {
    const child = spawn(command, args, { detached: true, stdio: "ignore", windowsHide: true });
    child.on("error", () => {});
    child.unref();
  } catch {
    // no opener: the printed URL is the way in
  }
}
