import { nodeCrypto } from "../util/crypto.js";
import { statSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { GhostcommitError, type Workspace } from "../index.js";
import { checkedOptions } from "../errors.js";
import { expectedRedo, expectedRewind } from "../session/expected-plan.js";
import { humanText } from "../util/format.js";
import { mapLimit } from "../util/pool.js";
import type { LineCounts } from "./patch.js";
import { DiffCache, readTimeline } from "./timeline.js";

/** The largest request body an action accepts; actions carry a session and a turn id. */
const MAX_BODY = 64 * 1024;
const SNAPSHOT_ID = /^[0-9a-f]{7,64}$/;

export function sendJson(res: ServerResponse, status: number, body: unknown, headers = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "Content-Type": "application/json; charset=utf-8", ...headers });
  res.end(text);
}

/**
 * The library's typed error, recognised by name: the bundled command line carries its own copy of
 * the class, so `instanceof` would miss the errors of the workspace it hands to this server.
 */
function asTypedError(error: unknown): GhostcommitError | null {
  return error instanceof Error && error.name === "GhostcommitError" && "code" in error
    ? (error as GhostcommitError)
    : null;
}

/** HTTP status for a library error: refusals (conflict, open turn) are 409, bad input 400. */
function statusFor(error: GhostcommitError): number {
  switch (error.code) {
    case "conflict":
    case "open-turn":
    case "plan-changed":
    case "nothing-to-redo":
      return 409;
    case "not-found":
    case "no-session":
      return 404;
    case "usage":
    case "bad-id":
    case "bad-input":
    case "ambiguous-id":
    case "outside-workspace":
      return 400;
    case "locked":
      return 423;
    case "not-a-workspace":
      return 410;
    default:
      return 500;
  }
}

export function sendError(res: ServerResponse, error: unknown): void {
  const typed = asTypedError(error);
  if (typed) {
    const body: Record<string, unknown> = { error: { code: typed.code, message: typed.message } };
    // The paths a refusal names, as the CLI's --json carries them; "Rewind anyway" is the override.
    const { conflicts, uncertain } = (typed.data ?? {}) as { conflicts?: unknown; uncertain?: unknown };
    if (Array.isArray(conflicts)) body.conflicts = conflicts;
    if (Array.isArray(uncertain)) body.uncertain = uncertain;
    sendJson(res, statusFor(typed), body);
    return;
  }
  const message = error instanceof Error ? error.message : String(error);
  sendJson(res, 500, { error: { code: "internal", message } });
}

function snapshotParam(url: URL, name: string, required: boolean): string | null {
  const value = url.searchParams.get(name);
  if (value === null || value === "") {
    if (required) throw new GhostcommitError("usage", `missing parameter ${name}`);
    return null;
  }
  if (!SNAPSHOT_ID.test(value))
    throw new GhostcommitError("bad-id", `not a snapshot id: ${value}`, { id: value });
  return value;
}

async function readBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  if (!(req.headers["content-type"] ?? "").startsWith("application/json")) {
    throw new GhostcommitError("usage", "actions take a JSON body (Content-Type: application/json)");
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY) throw new GhostcommitError("usage", "request body too large");
    chunks.push(chunk);
  }
  try {
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    if (body && typeof body === "object" && !Array.isArray(body)) return body;
  } catch {
    // reported below
  }
  throw new GhostcommitError("usage", "the request body is not a JSON object");
}

function stringField(body: Record<string, unknown>, name: string): string {
  const value = body[name];
  if (typeof value !== "string" || value === "") {
    throw new GhostcommitError("usage", `${name} must be a non-empty string`);
  }
  return value;
}

/** The API the page calls; every action goes through the library's public session API. */
export class Routes {
  private readonly diffs: DiffCache;

  constructor(private readonly ws: Workspace) {
    this.diffs = new DiffCache(ws);
  }

  /** Handles /api/… requests; returns false for any other path. */
  async handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean> {
    const route = `${req.method} ${url.pathname}`;
    try {
      if (url.pathname.startsWith("/api/")) this.requireWorkspace();
      switch (route) {
        case "GET /api/timeline":
          await this.timeline(req, res);
          return true;
        case "GET /api/diff": {
          const from = snapshotParam(url, "from", true) as string;
          sendJson(res, 200, await this.diffs.view(from, snapshotParam(url, "to", false)));
          return true;
        }
        case "GET /api/counts":
          sendJson(res, 200, await this.counts(url));
          return true;
        case "POST /api/rewind":
          await this.rewind(await readBody(req), res);
          return true;
        case "POST /api/redo": {
          // The page sends the turns it showed the redo bringing back, and "Redo anyway" the
          // files and conflicts it showed: a rewind made or redone elsewhere since, or a file
          // edited after the refusal, is refused (409 plan-changed), nothing changed.
          const body = checkedOptions(await readBody(req), "redo", {
            booleans: ["force", "dryRun"],
            strings: ["session"],
            others: ["shown"],
          });
          const shown = expectedRedo(body.shown, "shown");
          const session = await this.knownSession(stringField(body, "session"));
          const report = await session.redo({
            force: body.force === true,
            dryRun: body.dryRun === true,
            ...(shown ? { expect: shown } : {}),
          });
          sendJson(res, 200, report);
          return true;
        }
      }
    } catch (error) {
      sendError(res, error);
      return true;
    }
    if (url.pathname.startsWith("/api/")) {
      const known = ["/api/timeline", "/api/diff", "/api/counts", "/api/rewind", "/api/redo"];
      if (known.includes(url.pathname))
        sendJson(res, 405, { error: { code: "usage", message: "method not allowed" } });
      else sendJson(res, 404, { error: { code: "not-found", message: "no such route" } });
      return true;
    }
    return false;
  }

  /**
   * The workspace deleted (or moved) while the server runs: said as such, before anything runs
   * there, since git would only fail to start in it and a rewind could re-create its directory.
   */
  private requireWorkspace(): void {
    if (statSync(this.ws.root, { throwIfNoEntry: false })?.isDirectory()) return;
    throw new GhostcommitError(
      "not-a-workspace",
      `the workspace ${this.ws.root} no longer exists (deleted or moved?): nothing was changed`,
      { path: this.ws.root },
    );
  }

  /** The session named, refused as unknown as the command line does, not as one lacking the turn. */
  private async knownSession(name: string): Promise<ReturnType<Workspace["session"]>> {
    if (!(await this.ws.sessions()).some((known) => known.session === name)) {
      throw new GhostcommitError("not-found", `no session ${humanText(name)} in ${this.ws.root}`, {
        session: name,
      });
    }
    return this.ws.session(name);
  }

  /**
   * A rewind; the page's "Confirm rewind" sends the plan it `previewed`, and a rewind that would
   * now do something else (another turn ended since, files changed) is refused with the new plan,
   * changing nothing: the user confirms what was shown, never more. The library compares them
   * under the session's lock, just before the first file changes.
   */
  private async rewind(request: Record<string, unknown>, res: ServerResponse): Promise<void> {
    // As the library's: a misspelled or non-boolean dryRun must not rewind for real.
    const body = checkedOptions(request, "rewind", {
      booleans: ["force", "dryRun"],
      strings: ["session", "to"],
      others: ["previewed"],
    });
    const session = await this.knownSession(stringField(body, "session"));
    const options = { to: stringField(body, "to"), dryRun: body.dryRun === true, force: body.force === true };
    const previewed = expectedRewind(body.previewed, "previewed");
    try {
      sendJson(res, 200, await session.rewind({ ...options, ...(previewed ? { expect: previewed } : {}) }));
    } catch (error) {
      if (!(error instanceof GhostcommitError && error.code === "plan-changed")) throw error;
      const preview = await session.rewind({ ...options, dryRun: true });
      sendJson(res, 409, { error: { code: error.code, message: error.message }, preview });
    }
  }

  /** The whole timeline; an unchanged one answers 304 so the page can poll cheaply. */
  private async timeline(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      const text = JSON.stringify(await readTimeline(this.ws));
      const etag = `"${nodeCrypto().createHash("sha1").update(text).digest("hex")}"`;
      if (req.headers["if-none-match"] === etag) {
        res.writeHead(304, { ETag: etag });
        res.end();
        return;
      }
      res.writeHead(200, { "Content-Type": "application/json; charset=utf-8", ETag: etag });
      res.end(text);
    } catch (error) {
      sendError(res, error);
    }
  }

  /**
   * Added and removed line counts of turns (and `binary`, their binary files, when some):
   * `pairs=BEFORE..AFTER,…`. A pair that cannot be counted
   * (a snapshot expired or dropped) is left out: the other turns keep their counts.
   */
  private async counts(url: URL): Promise<Record<string, LineCounts>> {
    const pairs = (url.searchParams.get("pairs") ?? "").split(",").filter(Boolean);
    if (pairs.length > 1000) throw new GhostcommitError("usage", "at most 1000 pairs per request");
    const parsed = pairs.map((pair) => {
      const [from, to] = pair.split("..");
      if (!SNAPSHOT_ID.test(from ?? "") || !SNAPSHOT_ID.test(to ?? "")) {
        throw new GhostcommitError("bad-id", `not a pair of snapshot ids: ${pair}`, { id: pair });
      }
      return [from, to] as const;
    });
    await this.diffs.forgetGoneCounts();
    const counts = await mapLimit(parsed, 4, ([from, to]) =>
      this.diffs.lineCounts(from, to).catch(() => null),
    );
    return Object.fromEntries(pairs.flatMap((pair, i) => (counts[i] ? [[pair, counts[i]]] : [])));
  }
}
