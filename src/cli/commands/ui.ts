import type { Command } from "commander";
import { globalsOf, open, parseCount, withGlobals } from "../context.js";
import { GhostcommitError } from "../../errors.js";
import type { Action } from "../runner.js";

export function register(program: Command, run: Action): void {
  withGlobals(program.command("ui"))
    .description("serve a local web page of the workspace's sessions, turns and diffs")
    .option("--port <n>", "port on 127.0.0.1 (0: any free port)", "0")
    .option("--no-open", "print the URL only; do not open a browser")
    .action(
      run(async (command) => {
        const options = command.opts() as { port: string; open: boolean };
        const port = parseCount(options.port, "--port");
        if (port > 65535) throw new GhostcommitError("usage", `--port must be at most 65535, not ${port}`);
        const ws = await open(globalsOf(command));
        // Loaded on demand: the server and its page are no cost to every other command.
        const { startUi } = await import("../../ui/server.js");
        const server = await startUi(ws, { port }).catch((error: NodeJS.ErrnoException) => {
          const reason =
            error.code === "EADDRINUSE" ? "is in use" : `cannot be used (${error.code ?? error.message})`;
          throw new GhostcommitError("io", `port ${port} on 127.0.0.1 ${reason}`, {}, error);
        });
        let removeOpener = () => {};
        for (const signal of ["SIGINT", "SIGTERM"] as const) {
          // A rewind the page started finishes first (cut off, it would be left half-done); a
          // second signal stops at once, as it would without this handler.
          process.once(signal, () => {
            if (server.busy()) process.stderr.write("ghostcommit: finishing the request in progress first\n");
            server.close().then(() => {
              removeOpener();
              process.exit(0);
            });
          });
        }
        if (options.open) {
          const { openBrowser } = await import("../../ui/open-browser.js");
          removeOpener = openBrowser(server.url);
        }
        // The listening server keeps the process alive after this returns and the URL is printed.
        return {
          json: { url: server.url, port: server.port },
          human: () => `${server.url}\nserving ${ws.root} · stop with Ctrl-C`,
        };
      }),
    );
}
