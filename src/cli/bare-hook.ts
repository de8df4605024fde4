/**
 * `ghostcommit hook <agent>` as agents' settings run it, with no option: answered without setting
 * up the command line (see hook-entry.ts), and its event read by the loader before the bundle
 * (see loader.ts).
 */
export function isBareHookCall(argv: readonly string[]): boolean {
  return argv.length === 4 && argv[2] === "hook" && !argv[3].startsWith("-");
}
