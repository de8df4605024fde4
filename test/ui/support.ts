import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { request } from "node:http";
import { createInterface } from "node:readline";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, expect } from "vitest";
import { CLI, type Repo } from "../helpers/repo.js";

/** Debian's chromium; CI installs it. A missing browser fails the tests: they never skip. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`no chromium at ${CHROMIUM}: the web timeline tests need it (apt-get install chromium)`);
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    // Root in a container has no user namespaces for chromium's sandbox; nothing here may reach the network.
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}

export interface RunningUi {
  url: string;
  port: number;
  token: string;
  process: ChildProcess;
  /** Sends SIGTERM and resolves to the exit code. */
  stop(): Promise<number | null>;
}

/** Servers still running when a test file ends (a test failed before stopping them): killed, never left behind. */
const running = new Set<ChildProcess>();
afterAll(() => {
  for (const child of running) child.kill("SIGKILL");
  running.clear();
});

/** Runs `ghostcommit ui` as a subprocess in `repo` and waits for the URL on its first line. */
export async function startUi(
  repo: Repo,
  args = ["--no-open"],
  env: NodeJS.ProcessEnv = {},
): Promise<RunningUi> {
  const child = spawn(process.execPath, [CLI, "ui", "--port", "0", ...args], {
    cwd: repo.dir,
    env: { ...repo.sandbox.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr?.on("data", (chunk) => {
    stderr += chunk;
  });
  running.add(child);
  const exited = new Promise<number | null>((resolve) =>
    child.once("exit", (code) => {
      running.delete(child);
      resolve(code);
    }),
  );
  const firstLine = await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.once("line", resolve);
    exited.then((code) =>
      reject(new Error(`ghostcommit ui exited ${code} before printing its URL: ${stderr}`)),
    );
  });
  const url = new URL(firstLine);
  return {
    url: firstLine,
    port: Number(url.port),
    token: url.searchParams.get("token") ?? "",
    process: child,
    stop: () => {
      child.kill("SIGTERM");
      return exited;
    },
  };
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A plain HTTP request with exactly these headers (fetch would not let a test set Host). */
export function rawRequest(
  port: number,
  options: { method?: string; path: string; headers?: Record<string, string>; body?: string },
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: "127.0.0.1",
        port,
        method: options.method ?? "GET",
        path: options.path,
        headers: options.headers,
      },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (chunk) => {
          body += chunk;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on("error", reject);
    req.end(options.body);
  });
}

/**
 * One browser for a test file, and the servers its tests start (stopped at the end; with
 * `cleanStop`, each must exit 0). `openPage` opens a server's page once it is ready.
 */
export function browserPages(cleanStop = true): {
  servers: RunningUi[];
  openPage: (ui: RunningUi) => Promise<Page>;
} {
  let browser: Browser;
  const servers: RunningUi[] = [];
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    for (const ui of servers) {
      const code = await ui.stop();
      if (cleanStop) expect(code).toBe(0);
    }
    await browser?.close();
  });
  const openPage = async (ui: RunningUi) => {
    const page = await browser.newPage({ viewport: { width: 1100, height: 680 } });
    await page.goto(ui.url);
    await page.waitForSelector("body[data-ready]");
    return page;
  };
  return { servers, openPage };
}
