import { readdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { sizeTableRecords } from "../../src/capture/blob-sizes.js";
import type { Repo } from "../helpers/repo.js";
import { fileSandbox, workDigest } from "../helpers/support.js";
import { doctorIn } from "../helpers/in-process.js";

const { repo } = fileSandbox();

/** Backdates files so git's index entries for them are not "racily clean" (re-hashed by status). */
function backdate(r: Repo, ...rels: string[]): void {
  const past = new Date(Date.now() - 60_000);
  for (const rel of rels) utimesSync(r.path(rel), past, past);
}

/** This repository's store (the sandbox's data dir holds the stores of every test in the file). */
function storeOf(r: Repo): string {
  const root = path.join(r.sandbox.env.GHOSTCOMMIT_HOME!, "workspaces");
  const stores = readdirSync(root).map((name) => path.join(root, name));
  const mine = stores.filter(
    (dir) => JSON.parse(readFileSync(path.join(dir, "workspace.json"), "utf8")).root === r.dir,
  );
  expect(mine).toHaveLength(1);
  return mine[0];
}

/** Snapshots with tracing on; returns the snapshot and how many clean files had to be read. */
function tracedSnapshot(r: Repo): {
  id: string;
  verified: number;
  proofMade: boolean;
  digested: boolean;
  startedEarly: boolean;
} {
  const result = r.sandbox.cli(r.dir, ["snapshot", "--json"], undefined, { GHOSTCOMMIT_TRACE: "1" });
  expect(result.status, result.stderr).toBe(0);
  const line = /capture: (\d+) tracked files to verify/.exec(result.stderr);
  return {
    id: result.json.id,
    verified: line ? Number(line[1]) : -1,
    proofMade: result.stderr.includes("clean proof made from the whole index"),
    digested: result.stderr.includes("clean proof checked against a digest"),
    startedEarly: result.stderr.includes("clean proof started beside status"),
  };
}

const CONVERSIONS: [string, (r: Repo) => void][] = [
  ["* text=auto eol=lf", (r) => r.write({ ".gitattributes": "* text=auto eol=lf\n" })],
  ["* text eol=lf", (r) => r.write({ ".gitattributes": "* text eol=lf\n" })],
  ["core.autocrlf=input", (r) => r.git("config", "core.autocrlf", "input")],
];
const INDEXES: [string, (r: Repo) => void][] = [
  ["index v2/v3", () => {}],
  ["index v4", (r) => r.git("update-index", "--index-version", "4")],
  ["split index", (r) => r.git("config", "core.splitIndex", "true")],
];
/** Every conversion with the usual index, and the other index formats with one conversion. */
const VARIANTS = [
  ...CONVERSIONS.map((c) => [c, INDEXES[0]] as const),
  ...INDEXES.slice(1).map((i) => [CONVERSIONS[0], i] as const),
];

describe("content conversion: only files git's clean step may have changed are read", () => {
  for (const [[conversion, setUp], [index, setIndex]] of VARIANTS) {
    it(`${conversion}, ${index}: a CRLF file git calls clean is captured byte for byte`, () => {
      const r = repo({});
      setUp(r);
      r.write({ "a.txt": "one\ntwo\n", "b.txt": "b\n", "dir/c.txt": "c\n" });
      r.git("add", "-A");
      r.git("commit", "-qm", "base");
      setIndex(r);
      r.write({ "pending.txt": "intent to add\n" });
      r.git("add", "-N", "pending.txt"); // an extended-flag entry (index v3)
      backdate(r, "a.txt", "b.txt", "dir/c.txt");
      r.git("update-index", "-q", "--refresh");
      if (index === "split index") r.git("update-index", "--split-index");
      const first = tracedSnapshot(r);
      // Sizes prove every clean file (a split index cannot be read: then every file is, and no
      // blob sizes are listed for it beside status).
      expect(first.verified).toBe(index === "split index" ? 4 : 0);
      expect(first.startedEarly).toBe(index !== "split index");
      if (index === "split index") expect(readFileSync(r.path(".git/index")).includes("link")).toBe(true);

      // CRLF on disk, LF in the index: git's clean conversion makes them equal, so git says clean.
      r.write({ "a.txt": "one\r\ntwo\r\n" });
      backdate(r, "a.txt");
      r.git("add", "a.txt");
      expect(r.git("status", "--porcelain=v1", "--", "a.txt")).toBe("");
      const second = tracedSnapshot(r);
      if (index !== "split index") expect(second.verified).toBe(1);
      const before = workDigest(r.dir);
      r.write({ "a.txt": "agent\n", "b.txt": "agent\n" });
      r.ok("restore", second.id);
      expect(workDigest(r.dir)).toEqual(before);
      expect(readFileSync(r.path("a.txt"), "latin1")).toBe("one\r\ntwo\r\n");
      r.ok("restore", first.id);
      expect(readFileSync(r.path("a.txt"), "latin1")).toBe("one\ntwo\n");
    });
  }

  const STAGED: [string, (r: Repo) => void][] = [
    ...CONVERSIONS,
    [
      "a clean/smudge filter",
      (r) => {
        r.git("config", "filter.rot.clean", "tr a-z n-za-m");
        r.git("config", "filter.rot.smudge", "tr a-z n-za-m");
        r.write({ ".gitattributes": "*.txt filter=rot\n" });
      },
    ],
  ];
  for (const [[conversion, setUp], which] of STAGED.flatMap((c) => [
    [c, "first"] as const,
    [c, "later"] as const,
  ])) {
    it(`${conversion}: a staged file git calls clean against its index blob is captured byte for byte (${which} snapshot)`, () => {
      const r = repo({});
      setUp(r);
      r.write({ "kept.txt": "kept\n", "changed.txt": "old\n" });
      r.git("add", "-A");
      r.git("commit", "-qm", "base");
      if (which === "later") tracedSnapshot(r); // status then runs on the store's copy of the index
      // A new file and an edited one, staged with git add: the index holds their cleaned blobs.
      r.write({ "new.txt": "one\r\ntwo\r\n", "changed.txt": "new\r\nlines\r\n" });
      backdate(r, "new.txt", "changed.txt");
      r.git("add", "new.txt", "changed.txt");
      expect(r.git("status", "--porcelain=v1").split("\n").filter(Boolean).sort()).toEqual([
        "A  new.txt",
        "M  changed.txt",
      ]);
      const { id } = tracedSnapshot(r);
      r.write({ "new.txt": "agent\n", "changed.txt": "agent\n" });
      r.ok("restore", id);
      expect([
        readFileSync(r.path("new.txt"), "latin1"),
        readFileSync(r.path("changed.txt"), "latin1"),
      ]).toEqual(["one\r\ntwo\r\n", "new\r\nlines\r\n"]);
    });
  }

  it("the proof is not made again when status only rewrites its index's caches", async () => {
    const r = repo({});
    r.write({ ".gitattributes": "* text=auto eol=lf\n", "a.txt": "one\ntwo\n", "b.txt": "b\n" });
    r.git("add", "-A");
    r.git("commit", "-qm", "base");
    backdate(r, ".gitattributes", "a.txt", "b.txt");
    r.git("update-index", "-q", "--refresh");
    expect(tracedSnapshot(r).proofMade).toBe(true);
    // The same index file as last time: not even read.
    r.write({ "notes.txt": "untracked\n" });
    expect(tracedSnapshot(r)).toMatchObject({ proofMade: false, digested: false, verified: 0 });
    // Once a minute status rewrites its index's caches (a new file), not its entries: the digest
    // of the entries shows the proof still holds.
    const stampFile = path.join((await doctorIn(r)).store, "status-index.json");
    const stamp = JSON.parse(readFileSync(stampFile, "utf8"));
    writeFileSync(stampFile, JSON.stringify({ ...stamp, writtenAt: stamp.writtenAt - 61_000 }));
    r.write({ "new.txt": "untracked\n" });
    expect(tracedSnapshot(r)).toMatchObject({ proofMade: false, digested: true, verified: 0 });
    expect(tracedSnapshot(r)).toMatchObject({ proofMade: false, digested: false, verified: 0 });

    // CRLF on disk without `git add`: the size differs from the entry's, so git reports a change.
    r.write({ "b.txt": "b\r\n" });
    backdate(r, "b.txt");
    const crlf = tracedSnapshot(r);
    r.write({ "b.txt": "changed\n" });
    r.ok("restore", crlf.id);
    expect(readFileSync(r.path("b.txt"), "latin1")).toBe("b\r\n");
  });

  it("a CRLF checkout and an expanded $Id$ are read; files whose sizes prove them are not", () => {
    const r = repo({});
    r.write({
      ".gitattributes": "*.txt text eol=crlf\n*.id ident\n",
      "c.txt": "l1\nl2\n",
      "v.id": "version $Id$\n",
      "same.md": "no conversion here\n",
    });
    r.git("add", "-A");
    r.git("commit", "-qm", "base");
    r.remove("c.txt");
    r.remove("v.id");
    r.git("checkout", "--", "c.txt", "v.id");
    expect(readFileSync(r.path("c.txt"), "latin1")).toBe("l1\r\nl2\r\n");
    expect(r.read("v.id")).toMatch(/^version \$Id: [0-9a-f]{40} \$\n$/);
    backdate(r, "c.txt", "v.id", "same.md", ".gitattributes");
    r.git("update-index", "-q", "--refresh");
    expect(r.status()).toBe("");
    const before = workDigest(r.dir);
    const snap = tracedSnapshot(r);
    expect(snap.verified).toBe(2);
    r.write({ "c.txt": "x", "v.id": "y", "same.md": "z" });
    r.ok("restore", snap.id);
    expect(workDigest(r.dir)).toEqual(before);
  });

  it("a new store asks git every blob's size once, then takes them from its table", () => {
    // 1,500 files, two of them not as git stored them: every size is asked of git by id at once.
    const r = repo({});
    const files: Record<string, string> = { ".gitattributes": "* text=auto eol=lf\n" };
    for (let i = 0; i < 1500; i++) files[`src/f${i}.txt`] = `line ${i}\n`;
    r.write(files);
    r.git("add", "-A");
    r.git("commit", "-qm", "base");
    r.git("gc", "-q");
    // Two of them CRLF on disk, which git calls clean: sizes differ, so those two are read.
    r.write({ "src/f7.txt": "line 7\r\n", "src/f8.txt": "line 8\r\n" });
    backdate(r, ...Object.keys(files));
    r.git("add", "src/f7.txt", "src/f8.txt"); // records their new sizes: git now calls them clean
    r.git("update-index", "-q", "--refresh");
    expect(r.status()).toBe("");
    const before = workDigest(r.dir);
    const traced = r.sandbox.cli(r.dir, ["snapshot", "--json"], undefined, { GHOSTCOMMIT_TRACE: "1" });
    expect(traced.status, traced.stderr).toBe(0);
    // No table yet: the proof of your index starts beside status; status's private copy has the
    // same entries, so the proof is made once.
    expect(traced.stderr).toContain("capture: clean proof started beside status");
    expect(traced.stderr.split("clean proof made from the whole index").length).toBe(2);
    expect(traced.stderr).toContain("capture: 1501 blob sizes asked of git");
    expect(traced.stderr).toContain("capture: 2 tracked files to verify");
    // The table holds the size of each of the 1,501 files' blobs.
    const sizesFile = path.join(storeOf(r), "blob-sizes.bin");
    const records = () => sizeTableRecords(readFileSync(sizesFile));
    expect(records()).toBe(1501);
    // A new index (one file staged, one unstaged) is proven again from the table: only the new
    // blob's size is asked of git, and added to the table's end (the one unstaged stays in it).
    r.write({ "src/new.txt": "new\n" });
    r.git("add", "src/new.txt");
    r.git("rm", "-q", "--cached", "src/f0.txt");
    const again = r.sandbox.cli(r.dir, ["snapshot", "--json"], undefined, { GHOSTCOMMIT_TRACE: "1" });
    expect(again.stderr).toContain("clean proof made from the whole index");
    expect(again.stderr).toContain("capture: 1 blob sizes asked of git");
    expect(records()).toBe(1502);
    r.write({ "src/f7.txt": "changed\n", "src/f9.txt": "changed too\n" });
    r.remove("src/new.txt");
    r.ok("restore", traced.json.id);
    expect(workDigest(r.dir)).toEqual(before);
    expect(readFileSync(r.path("src/f7.txt"), "latin1")).toBe("line 7\r\n");
    // Once most of what it holds is no longer in the index, it is written anew with the index's
    // blobs only (.gitattributes and late.txt).
    r.git("rm", "-q", "--cached", "-r", "src");
    r.write({ "late.txt": "late\n" });
    r.git("add", "late.txt");
    r.ok("snapshot");
    expect(records()).toBe(2);
  });

  it("conversion named only deeper down, or above a workspace below the root, is proven in the first snapshot", () => {
    const r = repo({
      "README.md": "root\n",
      "pkg/.gitattributes": "*.txt text eol=lf\n",
      "pkg/a.txt": "one\ntwo\n",
      "pkg/b.txt": "b\n",
      "other/.gitattributes": "* text=auto eol=lf\n",
      "other/c.txt": "c\n",
    });
    // CRLF on disk, LF in the index, and git calls both clean.
    r.write({ "pkg/a.txt": "one\r\ntwo\r\n", "other/c.txt": "c\r\n" });
    backdate(r, "pkg/a.txt", "pkg/b.txt", "other/c.txt");
    r.git("add", "pkg/a.txt", "other/c.txt");
    r.git("update-index", "-q", "--refresh");
    expect(r.status()).toBe("");
    const whole = tracedSnapshot(r); // the root's attributes say nothing: the index walk finds pkg's
    expect(whole.verified).toBe(2);
    const below = r.sandbox.cli(r.path("other"), ["snapshot", "--json"], undefined, {
      GHOSTCOMMIT_TRACE: "1",
    });
    expect(below.status, below.stderr).toBe(0);
    expect(below.stderr).toContain("capture: 1 tracked files to verify");
    r.write({ "pkg/a.txt": "agent\n", "other/c.txt": "agent\n" });
    r.ok("restore", whole.id);
    expect(readFileSync(r.path("pkg/a.txt"), "latin1")).toBe("one\r\ntwo\r\n");
    expect(readFileSync(r.path("other/c.txt"), "latin1")).toBe("c\r\n");
    r.write({ "other/c.txt": "agent\n" });
    const restored = r.sandbox.cli(r.path("other"), ["restore", below.json.id, "--json"]);
    expect(restored.status, restored.stderr).toBe(0);
    expect(readFileSync(r.path("other/c.txt"), "latin1")).toBe("c\r\n");
  });

  it("a filter that keeps sizes (rot13) is checked file by file, without running it", () => {
    const r = repo({});
    r.write({ ".gitattributes": "*.rot filter=rot\n", "data.rot": "hello\n", "plain.txt": "p\n" });
    r.git("config", "filter.rot.clean", "tr a-z n-za-m");
    r.git("config", "filter.rot.smudge", "tr a-z n-za-m");
    r.git("add", "-A");
    r.git("commit", "-qm", "base");
    r.git("config", "filter.rot.clean", "false");
    r.git("config", "filter.rot.smudge", "false");
    backdate(r, "data.rot", "plain.txt", ".gitattributes");
    r.git("update-index", "-q", "--refresh");
    const snap = tracedSnapshot(r);
    expect(snap.verified).toBe(1);
    r.write({ "data.rot": "other\n" });
    r.ok("restore", snap.id);
    expect(r.read("data.rot")).toBe("hello\n");
  });
});
