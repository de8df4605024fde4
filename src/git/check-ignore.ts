/**
 * `git check-ignore` reads its names as pathspecs and rejects the literal-pathspec switch, so a
 * name starting with ":" is taken for pathspec magic: `:token` is judged as `token` (an ignored
 * `:*` file passes), and `:!notes` fails the whole call. Each name is sent after "./", which git
 * strips, and given back with it.
 */
export function checkIgnoreInput(names: Buffer[]): Buffer {
  return Buffer.concat(names.flatMap((name) => [Buffer.from("./"), name, Buffer.from([0])]));
}

/** A name as check-ignore prints it, without the "./" it was sent with. */
export function checkIgnoreName(printed: Buffer): Buffer {
  return printed[0] === 0x2e && printed[1] === 0x2f ? printed.subarray(2) : printed;
}
