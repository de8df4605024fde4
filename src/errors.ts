/** Stable error codes. The CLI maps them to exit statuses; JSON output carries them verbatim. */
export type ErrorCode =
  | "usage"
  | "not-found"
  | "ambiguous-id"
  | "bad-id"
  | "outside-workspace"
  | "not-a-workspace"
  | "git-failed"
  | "git-too-old"
  | "store-damaged"
  | "conflict"
  | "open-turn"
  | "disabled"
  | "locked"
  | "io"
  | "bad-config"
  | "bad-input"
  | "no-session"
  | "nothing-to-redo";

/** Every failure ghostcommit reports is one of these; `code` is stable, `message` is for people. */
export class GhostcommitError extends Error {
  readonly code: ErrorCode;
  readonly data: Record<string, unknown>;

  constructor(code: ErrorCode, message: string, data: Record<string, unknown> = {}, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = "GhostcommitError";
    this.code = code;
    this.data = data;
  }

  toJSON(): { code: ErrorCode; message: string } & Record<string, unknown> {
    return { code: this.code, message: this.message, ...this.data };
  }
}

/** Exit status for an error, per the CLI contract: 2 usage, 3 refused, 1 anything else. */
export function exitStatusFor(error: unknown): number {
  if (error instanceof GhostcommitError) {
    if (error.code === "usage") return 2;
    if (error.code === "conflict" || error.code === "open-turn") return 3;
  }
  return 1;
}
