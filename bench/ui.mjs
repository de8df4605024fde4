// npm run bench:ui [-- --turns N] [--runs N] [--out FILE]
// The web timeline on one session of N turns (default 200), in headless chromium: the page's
// weight (bytes it loads) and its time to first render, median of fresh page loads.
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { git, hermeticEnv } from "./lib/env.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const CLI = path.resolve(here, "../dist/ghostcommit.cjs");
const log = (line) => process.stderr.write(`${line}\n`);

function parseArgs(argv) {
  const args = { turns: 200, runs: 5, out: path.join(here, "results", "ui.json") };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split("=", 2);
    const value = () => inline ?? argv[++i];
    if (flag === "--turns") args.turns = Number(value());
    else if (flag === "--runs") args.runs = Number(value());
    else if (flag === "--out") args.out = path.resolve(value());
    else throw new Error(`unknown argument: ${argv[i]}`);
  }
  return args;
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** A repository with one session of `turns` turns, each editing one or two of 40 files. */
async function makeSession(root, env, turns) {
  mkdirSync(root, { recursive: true });
  git(["init", "-q", "-b", "main"], { cwd: root, env });
  for (let f = 0; f < 40; f++) writeFileSync(path.join(root, `file${f}.ts`), `export const v${f} = 0;\n`);
  git(["add", "-A"], { cwd: root, env });
  git(["commit", "-q", "-m", "initial"], { cwd: root, env });
  Object.assign(process.env, env);
  const { openWorkspace } = await import("../dist/index.js");
  const session = (await openWorkspace({ cwd: root })).session("bench-session");
  for (let t = 1; t <= turns; t++) {
    await session.beginTurn(String(t), {
      prompt: `turn ${t}: change the constants in file ${t % 40} and tidy up`,
    });
    writeFileSync(path.join(root, `file${t % 40}.ts`), `export const v${t % 40} = ${t};\n// turn ${t}\n`);
    if (t % 3 === 0) writeFileSync(path.join(root, `file${(t + 7) % 40}.ts`), `export const w = ${t};\n`);
    await session.endTurn(String(t));
    if (t % 50 === 0) log(`  ${t} turns`);
  }
}

async function startUi(root, env) {
  const child = spawn(process.execPath, [CLI, "ui", "--no-open", "--port", "0"], { cwd: root, env });
  const url = await new Promise((resolve, reject) => {
    createInterface({ input: child.stdout }).once("line", resolve);
    child.once("exit", (code) => reject(new Error(`ghostcommit ui exited ${code}`)));
  });
  return { url, stop: () => child.kill("SIGTERM") };
}

async function measure(browser, url, turns) {
  const page = await browser.newPage();
  const sizes = [];
  page.on("response", (response) => {
    sizes.push(
      response.body().then(
        (body) => ({ url: response.url(), size: body.length }),
        () => null,
      ),
    );
  });
  await page.goto(url);
  await page.waitForSelector("body[data-ready]");
  const firstRenderMs = await page.evaluate(
    () => performance.getEntriesByName("timeline-rendered")[0].startTime,
  );
  await page.waitForFunction(
    (n) => [...document.querySelectorAll(".counts")].filter((el) => el.textContent).length >= n,
    turns,
    { timeout: 600_000 },
  );
  const countsMs = await page.evaluate(() => performance.now());
  const loaded = (await Promise.all(sizes)).filter(Boolean);
  // The first render needs the page, its scripts and the timeline; line counts come after it.
  const firstBytes = loaded.filter((r) => !r.url.includes("/api/counts")).reduce((n, r) => n + r.size, 0);
  const allBytes = loaded.reduce((n, r) => n + r.size, 0);
  await page.close();
  return { firstRenderMs, countsMs, firstBytes, allBytes };
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const scratch = mkdtempSync(path.join(os.tmpdir(), "ghostcommit-bench-ui-"));
  const env = { ...hermeticEnv(scratch), GHOSTCOMMIT_HOME: path.join(scratch, "data") };
  const root = path.join(scratch, "repo");
  let ui;
  let browser;
  try {
    log(`making a session of ${args.turns} turns`);
    await makeSession(root, env, args.turns);
    ui = await startUi(root, env);
    browser = await chromium.launch({
      executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    });
    await measure(browser, ui.url, args.turns); // warm-up: the server's caches, chromium's start
    const runs = [];
    for (let i = 0; i < args.runs; i++) runs.push(await measure(browser, ui.url, args.turns));
    const result = {
      date: new Date().toISOString(),
      machine: { cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model ?? "unknown", node: process.version },
      turns: args.turns,
      runs: args.runs,
      methods: {
        firstRender:
          "navigation start to the timeline's first render (performance mark), fresh page, warm server",
        counts: "navigation start to every turn's +/- line counts shown (they load after the first render)",
        weight: "bytes of every response body the page loads (no compression)",
      },
      median: {
        firstRenderMs: Math.round(median(runs.map((r) => r.firstRenderMs))),
        countsMs: Math.round(median(runs.map((r) => r.countsMs))),
        firstRenderBytes: median(runs.map((r) => r.firstBytes)),
        allBytes: median(runs.map((r) => r.allBytes)),
      },
      samples: runs,
    };
    const m = result.median;
    process.stdout.write(
      `web timeline, one session of ${args.turns} turns (median of ${args.runs}):\n` +
        `  first render   ${m.firstRenderMs} ms, ${(m.firstRenderBytes / 1024).toFixed(1)} KiB loaded\n` +
        `  counts filled  ${m.countsMs} ms, ${(m.allBytes / 1024).toFixed(1)} KiB loaded in all\n`,
    );
    mkdirSync(path.dirname(args.out), { recursive: true });
    writeFileSync(args.out, `${JSON.stringify(result, null, 2)}\n`);
    log(`wrote ${path.relative(process.cwd(), args.out)}`);
  } finally {
    await browser?.close();
    ui?.stop();
    rmSync(scratch, { recursive: true, force: true });
  }
}

main().catch((error) => {
  log(error.stack ?? String(error));
  process.exitCode = 1;
});
