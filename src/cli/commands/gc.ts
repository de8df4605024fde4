import type { Command } from "commander";
import type { GcOptions } from "../../types.js";
import { globalsOf, open, parseCount, parseDuration, withGlobals } from "../context.js";
import { counted, formatBytes, formatCount, progress } from "../output.js";
import type { Action } from "../runner.js";

export function register(program: Command, run: Action): void {
  withGlobals(program.command("gc"))
    .description(
      "expire old snapshots and pack the store (protected snapshots are always kept: the newest turn of each session active in the last day, the latest restore's safety snapshot)",
    )
    .option("--older-than <age>", "expire snapshots older than this (e.g. 7d, 12h)")
    .option(
      "--keep <n>",
      "keep at most this many snapshots: the turns of the others can no longer be rewound",
    )
    .action(
      run(async (command) => {
        const options = command.opts() as { olderThan?: string; keep?: string };
        const gcOptions: GcOptions = {};
        if (options.olderThan !== undefined) gcOptions.olderThanMs = parseDuration(options.olderThan);
        if (options.keep !== undefined) gcOptions.keep = parseCount(options.keep, "--keep");
        const ws = await open(globalsOf(command));
        const done = progress("collecting garbage");
        const report = await ws.gc(gcOptions).finally(done);
        return {
          json: report,
          human: () =>
            [
              `dropped ${counted(report.dropped.length, "snapshot")}, kept ${formatCount(report.kept.length)}; store ${formatBytes(report.bytesBefore)} → ${formatBytes(report.bytesAfter)}${grewNote(report)}`,
              ...(report.overCap ? [overCapNote(report.overCap)] : []),
              ...(report.forgottenSessions > 0
                ? [`forgot ${counted(report.forgottenSessions, "session")} whose snapshots had all expired`]
                : []),
            ].join("\n"),
        };
      }),
    );
}

/** Why the store stays over its cap: nothing retention may drop would make it smaller. */
export function overCapNote(over: { maxBytes: number; unprotectedLeft: number }): string {
  const why =
    over.unprotectedLeft > 0
      ? `dropping the ${counted(over.unprotectedLeft, "unprotected snapshot")} left would free nothing, so they were kept`
      : "what it holds is needed by the protected snapshots";
  return `store stays over its cap (maxStoreBytes ${formatBytes(over.maxBytes)}): ${why}`;
}

/**
 * Why a store can grow by a gc: packing its few loose objects adds a pack index (1 KiB and up)
 * that outweighs what a small store frees. Said, so the figure is not taken for a fault.
 */
function grewNote(report: { bytesBefore: number; bytesAfter: number }): string {
  if (report.bytesAfter <= report.bytesBefore) return "";
  return " (packing adds an index, which outweighs what a store this small frees)";
}
