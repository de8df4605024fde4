import { spawnSync } from "node:child_process";
import { appendFileSync, existsSync, mkdirSync, readdirSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { copyCli, Sandbox } from "../helpers/repo.js";

let sb: Sandbox;
beforeEach(() => {
  sb = new Sandbox();
});
afterEach(() => sb.cleanup());

/** Every path under `dir` that `uid` does not own. */
function ownedByOthers(dir: string, uid: number): string[] {
  return (readdirSync(dir, { recursive: true }) as string[]).filter((rel) => {
    const owner = spawnSync("stat", ["-c", "%u", path.join(dir, rel)], { encoding: "utf8" }).stdout.trim();
    return Number(owner) !== uid;
  });
}

// `sudo -E ghostcommit …` keeps the user's HOME (or GHOSTCOMMIT_HOME): root would write into that
// user's data directory. Needs root, and a Node that uid 65534 may run.
describe.skipIf(process.getuid?.() !== 0)("root with another user's data directory", () => {
  it("is refused before anything is written there, saying why and what to run instead", (ctx) => {
    if (spawnSync(process.execPath, ["-e", "0"], { uid: 65534, gid: 65534 }).status !== 0) ctx.skip();
    const cli = copyCli(sb.dir("cli"));
    const repo = sb.repo("w", { "a.txt": "one\n" });
    appendFileSync(sb.env.GIT_CONFIG_GLOBAL!, "[safe]\n\tdirectory = *\n");
    spawnSync("chown", ["-R", "65534:65534", sb.home]);
    const run = (args: string[], uid?: number) =>
      spawnSync(process.execPath, [cli, ...args], {
        cwd: repo.dir,
        env: sb.env,
        encoding: "utf8",
        ...(uid === undefined ? {} : { uid, gid: uid }),
      });
    expect(run(["snapshot"], 65534).status).toBe(0); // the user's own store
    const data = sb.env.GHOSTCOMMIT_HOME!;
    const owned = () => ownedByOthers(data, 65534);
    expect(owned()).toEqual([]);
    repo.write({ "b.txt": "two\n" });
    for (const args of [["snapshot"], ["list"], ["turn", "begin", "--session", "s", "--turn", "1"]]) {
      const refused = run(args);
      expect(refused.status).toBe(1);
      expect(refused.stderr).toBe(
        `ghostcommit: running as root, with the data directory of another user (uid 65534, set by GHOSTCOMMIT_HOME, as \`sudo -E\` keeps it): ${data}. Files root wrote there would stop that user's own runs. Run ghostcommit as that user, or give root its own data directory (\`sudo -H\`, or GHOSTCOMMIT_HOME=/root/.local/share/ghostcommit)\n`,
      );
    }
    // A hook says nothing to the agent and fails nothing, as for any workspace it cannot serve.
    expect(run(["hook", "claude-code"]).status).toBe(0);
    expect(owned()).toEqual([]);
    expect(run(["snapshot"], 65534).status).toBe(0); // the user's next run works
  });

  it("a store root already wrote in is named by that user's doctor, with the command that mends it", (ctx) => {
    if (spawnSync(process.execPath, ["-e", "0"], { uid: 65534, gid: 65534 }).status !== 0) ctx.skip();
    const cli = copyCli(sb.dir("cli"));
    const repo = sb.repo("w", { "a.txt": "one\n" });
    appendFileSync(sb.env.GIT_CONFIG_GLOBAL!, "[safe]\n\tdirectory = *\n");
    const run = (args: string[]) =>
      spawnSync(process.execPath, [cli, ...args], {
        cwd: repo.dir,
        env: sb.env,
        encoding: "utf8",
        uid: 65534,
        gid: 65534,
      });
    spawnSync("chown", ["-R", "65534:65534", sb.home]);
    expect(run(["snapshot"]).status).toBe(0);
    const store = JSON.parse(run(["doctor", "--json"]).stdout).store as string;
    // What an older release left, run as root: a directory of root's among the objects (one the
    // snapshot's own objects do not already have: mkdir would fail on it).
    const objects = path.join(store, "git", "objects");
    const fanout = [...Array(256).keys()]
      .map((n) => n.toString(16).padStart(2, "0"))
      .find((d) => !existsSync(path.join(objects, d)))!;
    mkdirSync(path.join(objects, fanout), { mode: 0o700 });
    const doctor = run(["doctor", "--json"]);
    expect(doctor.status).toBe(1);
    const problem = JSON.parse(doctor.stdout).problems.find((p: any) =>
      p.path?.endsWith(`/objects/${fanout}`),
    );
    expect(problem).toMatchObject({ code: "store-not-writable" });
    expect(problem.message).toContain("1 file(s) in the store belong to another user (uid 0;");
    expect(problem.message).toContain(`\`sudo chown -R 65534:65534 ${store}\``);
    spawnSync("chown", ["-R", "65534:65534", store]);
    expect(JSON.parse(run(["doctor", "--json"]).stdout).ok).toBe(true);
  });
});
