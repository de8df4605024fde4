import type { Command } from "commander";
import { keptElsewhere } from "../../git/repository.js";
import { globalsOf, open, withGlobals } from "../context.js";
import { age, color, counted, humanText, shortId } from "../output.js";
import type { Action } from "../runner.js";

export function register(program: Command, run: Action): void {
  withGlobals(program.command("list"))
    .description("list this workspace's snapshots, newest first")
    .action(
      run(async (command) => {
        const ws = await open(globalsOf(command));
        const list = await ws.list();
        // Left out without a word, a damaged store would read as fewer snapshots.
        const unreadable = ws.engine.refs.unreadableListed.length;
        return {
          json: list,
          ...(unreadable > 0
            ? {
                exitCode: 1,
                problem: `${counted(unreadable, "snapshot")} of this workspace cannot be read (${unreadable === 1 ? "its commit is" : "their commits are"} missing or damaged) and ${unreadable === 1 ? "is" : "are"} not listed: \`ghostcommit doctor\` names the damage, and \`doctor --repair\` mends what it can`,
              }
            : {}),
          human: () => {
            // Each directory is a workspace of its own: say which one has none.
            if (list.length === 0)
              return `no snapshots of ${ws.root} yet${keptElsewhere(ws.root, ws.repositoryRoot, "snapshots")}; take one with \`ghostcommit snapshot\``;
            return list
              .map((s) => {
                const where = s.session
                  ? color.dim(` [${humanText(s.session)}${s.turn ? ` turn ${humanText(s.turn)}` : ""}]`)
                  : "";
                const kind = s.kind === "snapshot" ? "" : color.cyan(`${s.kind} `);
                return `${color.bold(shortId(s.id))}  ${age(s.createdAt).padEnd(11)} ${kind}${humanText(s.message)}${where}`;
              })
              .join("\n");
          },
        };
      }),
    );
}
