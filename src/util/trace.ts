/**
 * Phase timings for profiling (`GHOSTCOMMIT_TRACE=1`): milliseconds since the process started,
 * on stderr. Costs one environment lookup when off.
 */
export const tracing = Boolean(process.env.GHOSTCOMMIT_TRACE);

export function trace(label: string): void {
  if (tracing) process.stderr.write(`ghostcommit-trace ${performance.now().toFixed(1)} ${label}\n`);
}

// This process's own CPU time (git's is not in it): what competes with git for the cores; and its
// memory, as fresh pages cost time to touch and to give back. Once per process: the command-line
// loader and the bundle it loads each hold a copy of this module.
const reportedAtExit = Symbol.for("ghostcommit.trace.cpu");
if (tracing && !(reportedAtExit in process)) {
  Object.defineProperty(process, reportedAtExit, { value: true });
  process.on("exit", () => {
    const { userCPUTime: user, systemCPUTime: system, maxRSS, minorPageFault } = process.resourceUsage();
    trace(
      `exit; own CPU ${((user + system) / 1000).toFixed(0)} ms (user ${(user / 1000).toFixed(0)}), ` +
        `peak RSS ${(maxRSS / 1024).toFixed(0)} MB, ${minorPageFault} page faults`,
    );
  });
}
