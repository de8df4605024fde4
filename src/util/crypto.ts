import type * as Crypto from "node:crypto";
import { lazyBuiltin } from "./lazy-builtin.js";

/**
 * `node:crypto`, loaded on its first use: a hook that records a tool call, or a snapshot before its
 * status starts, needs none of it (their SHA-256 names come from `sha256Hex`).
 */
export const nodeCrypto = lazyBuiltin<typeof Crypto>("node:crypto");

/**
 * `bytes` random bytes as hex, for names and tokens that must differ between processes and calls
 * (temp files, lock owners, record ids), never for secrets (`secretHex`). From `Math.random`, which
 * V8 seeds in each process from the system's entropy: taking a lock loads no `node:crypto`.
 */
export function randomHex(bytes: number): string {
  let hex = "";
  while (hex.length < bytes * 2)
    hex += Math.floor(Math.random() * 2 ** 32)
      .toString(16)
      .padStart(8, "0");
  return hex.slice(0, bytes * 2);
}

/** `bytes` bytes from the system's secure random source, as hex: what guards access. */
export function secretHex(bytes: number): string {
  return nodeCrypto().randomBytes(bytes).toString("hex");
}
