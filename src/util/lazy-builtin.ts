import { createRequire } from "node:module";

/**
 * A Node built-in module loaded on its first use instead of when the command-line tool starts, so
 * a command pays only for the modules it uses (and a snapshot loads some while git runs).
 */
export function lazyBuiltin<T>(name: string): () => T {
  let loaded: T | undefined;
  return () => {
    loaded ??=
      (process.getBuiltinModule?.(name) as T | undefined) ?? (createRequire(import.meta.url)(name) as T);
    return loaded;
  };
}
