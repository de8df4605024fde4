import { nodeCrypto, secretHex } from "../util/crypto.js";
import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Workspace } from "../index.js";
import { Routes, sendJson } from "./routes.js";

/** The header the page sends its token in (a cross-site form cannot set it). */
export const TOKEN_HEADER = "x-ghostcommit-token";

/**
 * Only this page's own files, no inline script or style, no other origin: a path or prompt that
 * slipped through as markup still could not run or load anything.
 */
const SECURITY_HEADERS = {
  "Content-Security-Policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "X-Content-Type-Options": "nosniff",
  "X-Frame-Options": "DENY",
  // The token is in the page's URL: never send it along as a referrer.
  "Referrer-Policy": "no-referrer",
  "Cache-Control": "no-store",
};

const STATIC_FILES: Record<string, string> = {
  "/": "index.html",
  "/app.js": "app.js",
  "/app.css": "app.css",
  "/dom.js": "dom.js",
  "/diff.js": "diff.js",
  "/actions.js": "actions.js",
  "/keys.js": "keys.js",
};

const CONTENT_TYPES: Record<string, string> = {
  html: "text/html; charset=utf-8",
  js: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
};

/** The page's files, shipped next to this module (dist/ui/static) and read once. */
function loadStatic(): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  for (const name of new Set(Object.values(STATIC_FILES))) {
    files.set(name, readFileSync(new URL(`./static/${name}`, import.meta.url)));
  }
  return files;
}

export interface UiServer {
  url: string;
  port: number;
  token: string;
  /** Whether a request is being answered (a rewind may be writing files). */
  busy(): boolean;
  /** Stops taking requests, lets those being answered finish, then closes every connection. */
  close(): Promise<void>;
}

/**
 * A browser opening the page itself (GET /, Accept: text/html) without the token or with an old
 * one: most likely a tab reloaded after the server was restarted, or a stale link. It is answered
 * with a page saying what to do, not the API's JSON; it holds no token and nothing of the workspace.
 */
function opensThePage(req: IncomingMessage, url: URL): boolean {
  return (
    url.pathname === "/" &&
    (req.method === "GET" || req.method === "HEAD") &&
    (req.headers.accept ?? "").includes("text/html")
  );
}

const refusalPage = (title: string, text: string) =>
  `<!doctype html>\n<html lang="en">\n<head><meta charset="utf-8"><title>${title}</title></head>\n` +
  `<body>\n<h1>${title}</h1>\n<p>${text}</p>\n</body>\n</html>\n`;

const REFUSAL_PAGES = {
  "no-token": refusalPage(
    "This ghostcommit ui link has no token",
    "The page needs the token in the URL <code>ghostcommit ui</code> printed when it started: open that URL.",
  ),
  "bad-token": refusalPage(
    "This ghostcommit ui link is no longer valid",
    "The ghostcommit ui server was restarted (each start has a new token), or this link is stale. " +
      "Open the URL <code>ghostcommit ui</code> printed when it started.",
  ),
};

/** A request refused for its token: JSON, but a page to a browser opening the page itself. */
function refuseToken(
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  status: number,
  error: { code: keyof typeof REFUSAL_PAGES; message: string },
): void {
  if (!opensThePage(req, url)) {
    sendJson(res, status, { error });
    return;
  }
  res.writeHead(status, { "Content-Type": CONTENT_TYPES.html });
  res.end(req.method === "HEAD" ? undefined : REFUSAL_PAGES[error.code]);
}

function sameToken(given: string | null, token: string): boolean {
  if (given === null) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && nodeCrypto().timingSafeEqual(a, b);
}

/** Serves the workspace's timeline on 127.0.0.1 (`port` 0: any free port); rejects with listen's error. */
export async function startUi(ws: Workspace, options: { port?: number } = {}): Promise<UiServer> {
  const token = secretHex(24);
  const files = loadStatic();
  const routes = new Routes(ws);
  let port = 0;

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) res.setHeader(name, value);
    // A page on another site whose name resolves to 127.0.0.1 (DNS rebinding) sends its own Host.
    const host = (req.headers.host ?? "").toLowerCase();
    if (host !== `127.0.0.1:${port}` && host !== `localhost:${port}`) {
      sendJson(res, 403, {
        error: { code: "bad-host", message: "this server only answers to its own address" },
      });
      return;
    }
    // A request target no URL can be made of (`//[`): refused as such, not as an internal error.
    const url = URL.canParse(req.url ?? "/", `http://${host}`)
      ? new URL(req.url ?? "/", `http://${host}`)
      : null;
    if (!url) {
      sendJson(res, 400, { error: { code: "usage", message: "not a request target this server answers" } });
      return;
    }
    const headerToken = req.headers[TOKEN_HEADER];
    // State changes take the token only in the header: a form or link from elsewhere cannot set it.
    // Reads (GET, and HEAD as `curl -I` sends it) take it in the URL too, as the page's files do.
    const given =
      typeof headerToken === "string"
        ? headerToken
        : req.method === "GET" || req.method === "HEAD"
          ? url.searchParams.get("token")
          : null;
    if (given === null) {
      refuseToken(req, res, url, 401, {
        code: "no-token",
        message: "the token from the URL ghostcommit printed is needed",
      });
      return;
    }
    if (!sameToken(given, token)) {
      refuseToken(req, res, url, 403, { code: "bad-token", message: "wrong token" });
      return;
    }
    if (await routes.handle(req, res, url)) return;
    const name = STATIC_FILES[url.pathname];
    if (!name) {
      sendJson(res, 404, { error: { code: "not-found", message: "no such page" } });
      return;
    }
    if (req.method !== "GET" && req.method !== "HEAD") {
      sendJson(res, 405, { error: { code: "usage", message: "method not allowed" } });
      return;
    }
    let body = files.get(name) as Buffer;
    // Asset URLs carry the token too; it is hex, so it needs no escaping in HTML.
    if (name === "index.html") body = Buffer.from(body.toString("utf8").replaceAll("{{token}}", token));
    res.writeHead(200, { "Content-Type": CONTENT_TYPES[name.split(".").pop() as string] });
    res.end(req.method === "HEAD" ? undefined : body);
  };

  // Requests being answered: a rewind or redo the page started runs to its end before the server stops.
  const inFlight = new Set<Promise<void>>();
  const server: Server = createServer((req, res) => {
    const answered = handle(req, res)
      .catch((error) => {
        if (!res.headersSent) sendJson(res, 500, { error: { code: "internal", message: String(error) } });
        else res.end();
      })
      .finally(() => inFlight.delete(answered));
    inFlight.add(answered);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", () => resolve());
  });
  port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/?token=${token}`,
    port,
    token,
    busy: () => inFlight.size > 0,
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      await Promise.allSettled([...inFlight]);
      server.closeAllConnections();
      await closed;
    },
  };
}
