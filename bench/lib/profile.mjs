// Where one snapshot's time goes: Node start-up, CLI import, and each git child (from trace2).
import { readdirSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { run } from "./env.mjs";
import { ghostcommit, MAIN } from "./ghostcommit.mjs";
import { median, round } from "./measure.mjs";

/** Microsecond-precise epoch ms of a trace2 UTC timestamp ("2024-01-01T00:00:00.123456Z"). */
function epochMs(iso) {
  const [whole, frac = "0"] = iso.replace("Z", "").split(".");
  return Date.parse(`${whole}Z`) + Number(`0.${frac}`) * 1000;
}

/** The git subcommand and its first arguments, with `-c key=value` and other global options left out. */
function commandOf(argv) {
  let i = 1;
  while (i < argv.length && argv[i].startsWith("-")) i += argv[i] === "-c" || argv[i] === "-C" ? 2 : 1;
  return argv.slice(i, i + 3).join(" ");
}

/** One record per git process: its argv, start offset from our spawn, duration, nesting depth. */
function readTrace(dir, t0) {
  const processes = [];
  for (const file of readdirSync(dir)) {
    let start;
    let end;
    let sid = "";
    for (const line of readFileSync(path.join(dir, file), "utf8").split("\n")) {
      if (!line) continue;
      const event = JSON.parse(line);
      if (event.event === "start") {
        start = event;
        sid = event.sid;
      } else if (event.event === "exit" || event.event === "atexit") end = event;
    }
    if (!start) continue;
    processes.push({
      command: commandOf(start.argv),
      startMs: round(epochMs(start.time) - t0),
      ms: round((end?.t_abs ?? start.t_abs) * 1000),
      depth: sid.split("/").length,
    });
  }
  return processes.sort((a, b) => a.startMs - b.startMs);
}

/** Total length of the union of [start, start + ms) intervals. */
function unionMs(intervals) {
  let total = 0;
  let reach = Number.NEGATIVE_INFINITY;
  for (const { startMs, ms } of [...intervals].sort((a, b) => a.startMs - b.startMs)) {
    const endMs = startMs + ms;
    if (endMs <= reach) continue;
    total += endMs - Math.max(startMs, reach);
    reach = endMs;
  }
  return total;
}

function medianOf(times, work) {
  return round(median(Array.from({ length: times }, () => work().ms)));
}

/** Profiles one snapshot (`fresh`: into a new store) of the tree in `ctx`. */
export function profileSnapshot(ctx, fresh) {
  const home = ctx.tempDir("home-profile-");
  const traceDir = ctx.tempDir("trace2-");
  try {
    if (!fresh) {
      ghostcommit(ctx.root, home, ["snapshot"], { env: ctx.env, scratch: ctx.scratch });
      ctx.mutate();
    }
    const t0 = performance.timeOrigin + performance.now();
    const r = ghostcommit(ctx.root, home, ["snapshot"], {
      env: ctx.env,
      scratch: ctx.scratch,
      extra: { GIT_TRACE2_EVENT: traceDir },
    });
    // Those started after the command exited belong to its detached build of the private index.
    const processes = readTrace(traceDir, t0).map((p) =>
      p.startMs >= r.ms ? { ...p, background: true } : p,
    );
    const top = processes.filter((p) => p.depth === 1 && !p.background);
    const gitBusy = unionMs(top);
    return {
      kind: fresh ? "first" : "later",
      totalMs: round(r.ms),
      gitProcesses: top.length,
      gitSumMs: round(top.reduce((s, p) => s + p.ms, 0)),
      gitBusyMs: round(gitBusy),
      nodeOnlyMs: round(r.ms - gitBusy),
      processes,
    };
  } finally {
    rmSync(home, { recursive: true, force: true });
    rmSync(traceDir, { recursive: true, force: true });
  }
}

/**
 * Node's own start-up, and start-up plus loading the CLI (`--version` does nothing else), with
 * the CLI's code cache in `home` written first by the runs that write it.
 */
export function nodeBaseline(env, home) {
  const withHome = { ...env, GHOSTCOMMIT_HOME: home };
  for (let i = 0; i < 4; i++) run(process.execPath, [MAIN, "--version"], { env: withHome });
  return {
    nodeStartMs: medianOf(7, () => run(process.execPath, ["-e", "0"], { env })),
    // As the caller's environment has it (e.g. with NODE_EXTRA_CA_CERTS, which the bench drops).
    nodeStartCallerEnvMs: medianOf(7, () => run(process.execPath, ["-e", "0"], { env: process.env })),
    cliImportMs: medianOf(7, () => run(process.execPath, [MAIN, "--version"], { env: withHome })),
  };
}
