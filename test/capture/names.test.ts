import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { Repo } from "../helpers/repo.js";
import { fileSandbox, filesOf, gitDirDigest, workDigest } from "../helpers/support.js";

const { sandbox, repo } = fileSandbox();

/** A path under the repository given as raw bytes (names that are not UTF-8). */
function bytePath(r: Repo, name: Buffer): Buffer {
  return Buffer.concat([Buffer.from(`${r.dir}/`), name]);
}

const LATIN1 = Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x2e, 0x74, 0x78, 0x74]); // "café.txt" in latin1
const ODD = [
  "new\nline.txt",
  "quo\"te's.txt",
  "-leading-dash",
  ":(exclude)x",
  "*glob?[a]",
  "sp ace/ tab\t.txt",
];

describe("odd file names", () => {
  it("captures and restores names with newlines, quotes, dashes, pathspec magic and non-UTF-8 bytes", async () => {
    const r = repo({});
    const tracked: Record<string, string> = {};
    for (const name of ODD) tracked[`t/${name}`] = `tracked ${name}\n`;
    r.write(tracked);
    writeFileSync(bytePath(r, Buffer.concat([Buffer.from("t/"), LATIN1])), "latin1 tracked\n");
    r.git("add", "-A");
    r.git("commit", "-qm", "odd");
    const untracked: Record<string, string> = {};
    for (const name of ODD) untracked[`u/${name}`] = `untracked ${name}\n`;
    r.write(untracked);
    writeFileSync(bytePath(r, Buffer.concat([Buffer.from("u/"), LATIN1])), "latin1 untracked\n");
    writeFileSync(r.path("x"), "plain x\n"); // what ":(exclude)x" would have meant as magic

    const before = workDigest(r.dir);
    const snap = r.ok("snapshot");
    expect(snap.fileCount).toBe(2 * (ODD.length + 1) + 1);
    const files = await filesOf(r, snap.id);
    for (const name of ODD) expect(files).toEqual(expect.arrayContaining([`t/${name}`, `u/${name}`]));

    // The agent edits, deletes and adds odd names.
    for (const name of ODD) {
      writeFileSync(r.path(`t/${name}`), "agent\n");
      r.remove(`u/${name}`);
      writeFileSync(r.path(`u/${name}.new`), "agent new\n");
    }
    writeFileSync(bytePath(r, Buffer.concat([Buffer.from("t/"), LATIN1])), "agent\n");
    writeFileSync(bytePath(r, Buffer.concat([Buffer.from("u/"), LATIN1, Buffer.from(".new")])), "n\n");
    r.remove("x");

    const report = r.ok("restore", snap.id);
    expect(report.skipped).toEqual([]);
    expect(workDigest(r.dir)).toEqual(before);
    const u = readdirSync(Buffer.from(r.path("u")), { encoding: "buffer" });
    expect(u.some((n) => n.equals(LATIN1))).toBe(true);
    expect(readFileSync(bytePath(r, Buffer.concat([Buffer.from("t/"), LATIN1])), "utf8")).toBe(
      "latin1 tracked\n",
    );
  });

  it("an include path with pathspec magic or a leading dash is taken literally", async () => {
    const r = repo({ ".gitignore": "*.secret\n" });
    r.write({ ":(exclude)a.secret": "magic\n", "-v.secret": "dash\n", "b.secret": "other\n" });
    const snap = r.ok("snapshot", "--include", ":(exclude)a.secret", "--include=-v.secret");
    expect((await filesOf(r, snap.id)).sort()).toEqual(["-v.secret", ".gitignore", ":(exclude)a.secret"]);
  });
});

describe("the user's git configuration never changes bytes or runs programs", () => {
  it("core.autocrlf=true: tracked and untracked files round-trip byte for byte", () => {
    const r = repo({});
    r.git("config", "core.autocrlf", "true");
    r.write({ "crlf.txt": "a\r\nb\r\n", "lf.txt": "a\nb\n", "mixed.txt": "a\r\nb\nc\r" });
    r.git("add", "-A");
    r.git("commit", "-qm", "endings");
    r.write({ "u-crlf.txt": "u\r\nv\r\n", "u-mixed.txt": "x\ny\r\n" });
    const before = workDigest(r.dir);
    const snap = r.ok("snapshot");
    r.write({ "crlf.txt": "agent\n", "lf.txt": "agent\r\n", "mixed.txt": "m", "u-crlf.txt": "u\n" });
    r.ok("restore", snap.id);
    expect(workDigest(r.dir)).toEqual(before);
    expect(readFileSync(r.path("crlf.txt")).toString("latin1")).toBe("a\r\nb\r\n");
  });

  it(".gitattributes with eol=crlf and a clean/smudge filter: byte-exact, and the filter never runs", () => {
    const r = repo({});
    const marker = path.join(sandbox.home, `filter-ran-${path.basename(r.dir)}`);
    r.write({
      ".gitattributes": "* text eol=crlf\n*.rot filter=rot\n",
      "text.txt": "one\ntwo\n",
      "data.rot": "hello\n",
    });
    r.git("config", "filter.rot.clean", "tr a-z n-za-m");
    r.git("config", "filter.rot.smudge", "tr a-z n-za-m");
    r.git("add", "-A");
    r.git("commit", "-qm", "attrs");
    // From now on a filter run leaves a marker (and would fail the command).
    const script = path.join(sandbox.home, `filter-${path.basename(r.dir)}.sh`);
    writeFileSync(script, `#!/bin/sh\ntouch '${marker}'\nexit 1\n`);
    chmodSync(script, 0o755);
    r.git("config", "filter.rot.clean", script);
    r.git("config", "filter.rot.smudge", script);
    r.git("config", "filter.rot.required", "true");
    r.write({ "text.txt": "one\r\ntwo\nthree\r\n", "new.rot": "plain\n", "new.txt": "n\n" });
    const before = workDigest(r.dir);
    const snap = r.ok("snapshot");
    r.write({ "text.txt": "x", "data.rot": "y", "new.rot": "z" });
    r.remove("new.txt");
    r.ok("restore", snap.id);
    expect(workDigest(r.dir)).toEqual(before);
    expect(readFileSync(r.path("data.rot"), "utf8")).toBe("hello\n");
    expect(existsSync(marker)).toBe(false);
  });

  for (const store of ["shadow", "repo"]) {
    it(`hooks, commit.gpgsign and core.fsmonitor in the repo config do nothing (${store} store)`, () => {
      const r = repo({ "a.txt": "a\n" });
      const marker = path.join(sandbox.home, `ran-${path.basename(r.dir)}`);
      const script = `#!/bin/sh\necho "$0" >> '${marker}'\nexit 1\n`;
      const hooks = r.path(".git/hooks");
      mkdirSync(hooks, { recursive: true });
      for (const hook of [
        "pre-commit",
        "commit-msg",
        "post-commit",
        "reference-transaction",
        "post-checkout",
        "post-index-change",
        "pre-auto-gc",
      ]) {
        writeFileSync(path.join(hooks, hook), script);
        chmodSync(path.join(hooks, hook), 0o755);
      }
      const fsmonitor = path.join(sandbox.home, `fsmonitor-${path.basename(r.dir)}.sh`);
      writeFileSync(fsmonitor, script);
      chmodSync(fsmonitor, 0o755);
      r.git("config", "commit.gpgsign", "true");
      r.git("config", "gpg.program", fsmonitor);
      r.git("config", "core.fsmonitor", fsmonitor);
      r.write({ "a.txt": "edited\n", "b.txt": "new\n" });
      const snap = r.ok("--store", store, "snapshot");
      r.write({ "a.txt": "agent\n" });
      // A file to write back, which the restore checks against the ignore rules now (in a trial
      // this ran a user's slow fsmonitor hook for as long as it took), dry run and real.
      r.remove("b.txt");
      r.ok("--store", store, "restore", snap.id, "--dry-run");
      r.ok("--store", store, "restore", snap.id);
      expect([r.read("a.txt"), r.read("b.txt")]).toEqual(["edited\n", "new\n"]);
      // A push checks its snapshots for ignored files against the repository's rules.
      const remote = path.join(sandbox.home, `remote-${store}.git`);
      r.git("init", "-q", "--bare", remote);
      r.ok("--store", store, "push", remote, "--snapshots");
      // doctor and gc too (the repo store's walks of what the user's index holds ran the fsmonitor hook)
      r.ok("--store", store, "doctor");
      r.ok("--store", store, "gc", "--keep", "1");
      expect(existsSync(marker) ? readFileSync(marker, "utf8") : "").toBe("");
    });
  }

  it("the user's .git stays byte-identical when odd names and conversions are involved", () => {
    const r = repo({ "a.txt": "a\r\n" });
    r.git("config", "core.autocrlf", "input");
    r.write({ "-x": "dash\n", "b\nc": "nl\n" });
    const before = gitDirDigest(r);
    const snap = r.ok("snapshot");
    r.remove("-x");
    r.ok("restore", snap.id);
    expect(gitDirDigest(r)).toEqual(before);
    expect(r.read("-x")).toBe("dash\n");
  });
});
