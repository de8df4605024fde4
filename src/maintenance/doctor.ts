import { promises as fs } from "node:fs";
import path from "node:path";
import type { Engine } from "../engine.js";
import { runGit } from "../git/exec.js";
import { borrowingProtected } from "../store/borrow.js";
import { decodeMessage } from "../store/metadata.js";
import type { DoctorReport } from "../types.js";

type Problem = DoctorReport["problems"][number];

/** Extra checks contributed by other layers (session journals, hook logs). */
export type DoctorCheck = (engine: Engine) => Promise<Problem[]>;

export const MIN_GIT = [2, 25] as const;

/** Parses "git version 2.39.5" (or a vendor suffix) into numbers. */
export function parseGitVersion(text: string): number[] | null {
  const match = /git version (\d+)\.(\d+)(?:\.(\d+))?/.exec(text);
  return match ? [Number(match[1]), Number(match[2]), Number(match[3] ?? 0)] : null;
}

/** Checks git, the store's objects and refs, and leftovers of interrupted runs. */
export async function runDoctor(engine: Engine, extraChecks: DoctorCheck[] = []): Promise<DoctorReport> {
  const problems: Problem[] = [];
  const versionText =
    (await runGit(["--version"], { cwd: engine.paths.dir }).catch(() => null))?.stdout.toString() ?? "";
  const version = parseGitVersion(versionText);
  if (!version || version[0] < MIN_GIT[0] || (version[0] === MIN_GIT[0] && version[1] < MIN_GIT[1])) {
    problems.push({
      code: "git-too-old",
      message: `git ${MIN_GIT.join(".")} or newer is needed (found: ${versionText.trim() || "none"})`,
    });
  }
  const storeExists = await fs.access(path.join(engine.paths.gitDir, "HEAD")).then(
    () => true,
    () => false,
  );
  if (!storeExists) {
    problems.push({ code: "no-store", message: `no store yet at ${engine.paths.dir}` });
  } else {
    problems.push(...(await checkSnapshots(engine)));
    if (
      engine.refs.kind === "shadow" &&
      engine.location.kind === "git" &&
      !(await borrowingProtected(engine.paths.dir))
    ) {
      problems.push({
        code: "borrowed-unprotected",
        message:
          "the store is on another file system than the repository: objects borrowed from it are not protected from its gc",
      });
    }
    problems.push(...(await checkLeftovers(engine)));
    for (const check of extraChecks) problems.push(...(await check(engine)));
  }
  return {
    ok: problems.length === 0,
    problems,
    gitVersion: version?.join("."),
    store: engine.paths.dir,
  };
}

async function checkSnapshots(engine: Engine): Promise<Problem[]> {
  const problems: Problem[] = [];
  const git = (args: string[], okCodes = [0]) =>
    runGit(args, { cwd: engine.paths.dir, env: { GIT_DIR: engine.refs.refsGitDir }, okCodes });
  const refs = await git([
    "for-each-ref",
    "--format=%(objectname) %(objecttype) %(refname)",
    engine.refs.refPrefix,
  ]);
  const ids: string[] = [];
  for (const line of refs.stdout.toString("latin1").split("\n").filter(Boolean)) {
    const [id, type, ref] = line.split(" ");
    if (type !== "commit") {
      problems.push({ code: "bad-ref", message: `${ref} does not point at a commit` });
      continue;
    }
    ids.push(id);
  }
  if (ids.length === 0) return problems;
  // Walk every object every snapshot needs, borrowed ones included.
  const walk = await runGit(["rev-list", "--objects", "--no-walk", "--missing=print", "--stdin"], {
    cwd: engine.paths.dir,
    env: engine.readEnv,
    input: `${ids.join("\n")}\n`,
    okCodes: [0, 128],
  });
  if (walk.code !== 0) {
    problems.push({
      code: "missing-objects",
      message: `the store cannot be walked: ${walk.stderr.trim().split("\n").pop()}`,
    });
  } else {
    const missing = walk.stdout
      .toString("latin1")
      .split("\n")
      .filter((l) => l.startsWith("?"));
    for (const line of missing.slice(0, 20)) {
      problems.push({
        code: "missing-object",
        message: `object ${line.slice(1, 41)} needed by a snapshot is missing`,
      });
    }
  }
  const messages = await git(
    ["for-each-ref", "--format=%(objectname)%00%(contents)%00", engine.refs.refPrefix],
    [0, 128],
  );
  const parts = messages.stdout.toString("utf8").split("\0");
  for (let i = 0; i + 1 < parts.length; i += 2) {
    const id = parts[i].replace(/^\n/, "");
    if (id && !decodeMessage(parts[i + 1])) {
      problems.push({ code: "bad-metadata", message: `snapshot ${id} has unreadable metadata` });
    }
  }
  return problems;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

async function checkLeftovers(engine: Engine): Promise<Problem[]> {
  const problems: Problem[] = [];
  for (const name of await fs.readdir(engine.paths.tmpDir).catch(() => [] as string[])) {
    const match = /^restore-(\d+)\.json$/.exec(name);
    if (!match || alive(Number(match[1]))) continue;
    const file = path.join(engine.paths.tmpDir, name);
    const journal = JSON.parse(await fs.readFile(file, "utf8").catch(() => "{}")) as { safety?: string };
    problems.push({
      code: "interrupted-restore",
      message: `a restore was interrupted; \`ghostcommit restore ${journal.safety ?? "<safety id>"}\` brings back the state before it`,
      path: file,
    });
  }
  return problems;
}
