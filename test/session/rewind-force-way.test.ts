import { lstatSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { sessionSandbox, turn } from "./support.js";
import { logIn } from "../helpers/in-process.js";

const { sandbox, repo } = sessionSandbox();

/** A turn edits a/b/c and cfg/app.ini; the user then puts a file at `a` and a symlink to shared config at `cfg`. */
async function blockedByUser() {
  const outside = sandbox.dir(`outside-${Math.random().toString(16).slice(2)}`);
  mkdirSync(`${outside}/cfg`, { recursive: true });
  writeFileSync(`${outside}/cfg/app.ini`, "OUTSIDE\n");
  const r = repo({ "a/b/c": "c\n", "cfg/app.ini": "orig\n" });
  await turn(r, "s", "1", () => r.write({ "a/b/c": "agent\n", "cfg/app.ini": "agent\n" }));
  r.remove("a");
  r.write({ a: "user notes\n" });
  r.remove("cfg");
  symlinkSync(`${outside}/cfg`, r.path("cfg"));
  return { r, outside };
}

describe("a forced rewind where the user put a file or symlink in place of the turn's directory", () => {
  it("does what the refusal promised: removes them, writes the turn's files and lists both as overwritten", async () => {
    const { r, outside } = await blockedByUser();
    const refused = r.cli(["rewind", "--session", "s", "--to", "1"]);
    expect(refused.status).toBe(3);
    expect(refused.stderr).toContain("--force overwrites");

    const plan = r.ok("rewind", "--session", "s", "--to", "1", "--force", "--dry-run");
    expect(plan).toMatchObject({ written: ["a/b/c", "cfg/app.ini"], deleted: ["a", "cfg"], skipped: [] });
    const forced = r.cli(["rewind", "--session", "s", "--to", "1", "--force", "--json"]);
    expect(forced.status).toBe(0);
    expect(forced.json.overridden.sort()).toEqual(["a", "a/b/c", "cfg", "cfg/app.ini"]);
    expect([r.read("a/b/c"), r.read("cfg/app.ini")]).toEqual(["c\n", "orig\n"]);
    expect(lstatSync(r.path("cfg")).isDirectory()).toBe(true);
    expect(readFileSync(`${outside}/cfg/app.ini`, "utf8")).toBe("OUTSIDE\n"); // the link's target is left alone

    // redo brings back what the user had put there
    r.ok("redo", "--session", "s");
    expect(r.read("a")).toBe("user notes\n");
    expect(lstatSync(r.path("cfg")).isSymbolicLink()).toBe(true);
    expect(readFileSync(`${outside}/cfg/app.ini`, "utf8")).toBe("OUTSIDE\n");
  });

  it("does the same for a path named explicitly, and only there", async () => {
    const { r } = await blockedByUser();
    const forced = r.cli(["rewind", "--session", "s", "--to", "1", "--force", "--", "cfg/app.ini"]);
    expect(forced.status).toBe(0);
    expect(forced.stdout).toContain("overwrote (--force) 2 conflicts: cfg, cfg/app.ini\n");
    expect(r.read("cfg/app.ini")).toBe("orig\n");
    expect(r.read("a")).toBe("user notes\n");
  });
});

describe("something a person put where a turn had removed files", () => {
  // Found with Codex hooks: after a turn's `rm -r d`, the person saved notes as the file `d`; the
  // rewind said it rewound, wrote nothing ("excluded: the target or the safety snapshot lacks it")
  // and used the turn up, so a forced rewind was refused as "already rewound".
  it("is a conflict: refused, naming it; --force removes it, writes the turn's files, and redo gives it back", async () => {
    const r = repo({ "d/a.txt": "A\n", "d/b.txt": "B\n", "top.txt": "top\n" });
    await turn(r, "s", "1", () => r.remove("d"));
    r.write({ d: "my notes\n" });
    const refused = r.cli(["rewind", "--session", "s", "--to", "1", "--json"]);
    expect([refused.status, refused.json.error.code, refused.json.conflicts]).toEqual([3, "conflict", ["d"]]);
    expect(r.read("d")).toBe("my notes\n");
    expect((await logIn(r, "s")).map((t: any) => t.state)).toEqual(["done"]);

    const plan = r.ok("rewind", "--session", "s", "--to", "1", "--force", "--dry-run");
    expect(plan).toMatchObject({
      written: ["d/a.txt", "d/b.txt"],
      deleted: ["d"],
      skipped: [],
      overridden: ["d"],
    });
    r.ok("rewind", "--session", "s", "--to", "1", "--force");
    expect([r.read("d/a.txt"), r.read("d/b.txt")]).toEqual(["A\n", "B\n"]);
    r.ok("redo", "--session", "s");
    expect(r.read("d")).toBe("my notes\n");
  });

  it("a directory where the turn deleted a file: the files in it are the conflict, and --force replaces them", async () => {
    const r = repo({ "top.txt": "top\n" });
    await turn(r, "s", "1", () => r.remove("top.txt"));
    r.write({ "top.txt/inner.txt": "user data\n" });
    const refused = r.cli(["rewind", "--session", "s", "--to", "1", "--json"]);
    expect([refused.status, refused.json.conflicts]).toEqual([3, ["top.txt/inner.txt"]]);
    expect(r.read("top.txt/inner.txt")).toBe("user data\n");

    const forced = r.ok("rewind", "--session", "s", "--to", "1", "--force");
    expect(forced).toMatchObject({
      written: ["top.txt"],
      deleted: ["top.txt/inner.txt"],
      overridden: ["top.txt/inner.txt"],
    });
    expect(r.read("top.txt")).toBe("top\n");
    r.ok("redo", "--session", "s");
    expect(r.read("top.txt/inner.txt")).toBe("user data\n");
  });

  it("in the way of a redo: refused, naming it, and --force puts the turn's files back over it", async () => {
    const r = repo({ "a.txt": "a\n" });
    await turn(r, "s", "1", () => r.write({ "gen/out.txt": "generated\n" }));
    r.ok("rewind", "--session", "s", "--to", "1");
    r.write({ gen: "the person's file\n" });
    const refused = r.cli(["redo", "--session", "s", "--json"]);
    expect([refused.status, refused.json.conflicts]).toEqual([3, ["gen"]]);
    expect(r.read("gen")).toBe("the person's file\n");
    const forced = r.ok("redo", "--session", "s", "--force");
    expect(forced).toMatchObject({ written: ["gen/out.txt"], deleted: ["gen"], overridden: ["gen"] });
    expect(r.read("gen/out.txt")).toBe("generated\n");
  });
});
