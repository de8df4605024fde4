import { lstatSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { sessionSandbox, turn } from "./support.js";

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
    expect(forced.stdout).toContain("overwrote (--force) 2 conflicts: cfg/app.ini, cfg\n");
    expect(r.read("cfg/app.ini")).toBe("orig\n");
    expect(r.read("a")).toBe("user notes\n");
  });
});
