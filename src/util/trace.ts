/**
 * Phase timings for profiling (`GHOSTCOMMIT_TRACE=1`): milliseconds since the process started,
 * on stderr. Costs one environment lookup when off.
 */
export const tracing = Boolean(process.env.GHOSTCOMMIT_TRACE);

export function trace(label: string): void {
  if (tracing) process.stderr.write(`ghostcommit-trace ${performance.now().toFixed(1)} ${label}\n`);
}
