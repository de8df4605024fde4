import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { Sandbox } from "../helpers/repo.js";
import { cliTurn, cloneOf, ghostRefs, machines, originRepo } from "./remote-support.js";

// A remote is someone else's machine: what it holds may be forged. Nothing fetched from it may make
// ghostcommit read or write outside the workspace (SPEC §4: paths outside it are never touched).
const { a, b, bare } = machines();

/** Writes an object into the bare repository `dir` with git itself (`--literally`: as a forger would). */
function hashObject(sandbox: Sandbox, dir: string, type: string, content: Buffer): string {
  return execFileSync("git", ["hash-object", "-t", type, "-w", "--literally", "--stdin"], {
    cwd: dir,
    env: sandbox.env,
    input: content,
  })
    .toString()
    .trim();
}

describe("a remote holding forged history", () => {
  it("cannot get a file written outside the workspace through a snapshot whose tree climbs out of it", () => {
    const remote = bare("snapshots.git");
    const onA = originRepo(a, "forge-a", remote, { "x.txt": "x\n" });
    onA.ok("snapshot");
    onA.ok("push", "--snapshots");
    const [ref] = ghostRefs(a, remote).filter((r) => r.includes("/snapshots/"));
    const original = a.git(remote, "cat-file", "commit", ref);
    const blob = hashObject(a, remote, "blob", Buffer.from("written by the remote\n"));
    const entry = (mode: string, name: string, oid: string) =>
      Buffer.concat([Buffer.from(`${mode} ${name}\0`), Buffer.from(oid, "hex")]);
    // One entry named `../../outside.txt`; or `..` directories, two deep, holding `outside.txt`.
    const flat = hashObject(a, remote, "tree", entry("100644", "../../outside.txt", blob));
    const inner = hashObject(a, remote, "tree", entry("100644", "outside.txt", blob));
    const up = hashObject(a, remote, "tree", entry("40000", "..", inner));
    const nested = hashObject(a, remote, "tree", entry("40000", "..", up));
    for (const [name, tree] of [
      ["flat", flat],
      ["nested", nested],
    ]) {
      const forged = hashObject(
        a,
        remote,
        "commit",
        Buffer.from(original.replace(/^tree [0-9a-f]{40}/, `tree ${tree}`)),
      );
      a.git(remote, "update-ref", ref.replace(/[0-9a-f]{40}$/, forged), forged);
      const onB = cloneOf(b, remote, `${name}/deep/forge-b`);
      const outside = path.join(onB.dir, "..", "..", "outside.txt");
      const fetched = onB.cli(["fetch", "--json"]);
      expect(fetched.status, name).toBe(1);
      expect(fetched.json.error.code).toBe("store-damaged");
      expect(fetched.json.error.message).toMatch(
        /^fetch from .* refused: tree [0-9a-f]{40} it sent names (\.\.\/\.\.\/outside\.txt|\.\.), which would be written outside the workspace or nowhere \(forged or damaged\); nothing was fetched$/,
      );
      expect(onB.cli(["list", "--json"]).json.map((s: { id: string }) => s.id)).not.toContain(forged);
      expect(onB.cli(["restore", forged.slice(0, 12), "--json"]).status).toBe(1);
      expect(existsSync(outside), name).toBe(false);
      a.git(remote, "update-ref", "-d", ref.replace(/[0-9a-f]{40}$/, forged));
    }
  });

  it("takes what git itself only warns of: a file named .GIT, an old commit of the repository with zero-padded modes", () => {
    const remote = bare("legacy.git");
    const onA = originRepo(a, "legacy-a", remote, { "app.ts": "1\n" });
    // An old tree written by a tool that padded its modes, merged into the branch's history.
    const blob = onA.git("hash-object", "-w", "app.ts").trim();
    const padded = hashObject(
      a,
      onA.dir,
      "tree",
      Buffer.concat([Buffer.from("0100644 old.ts\0"), Buffer.from(blob, "hex")]),
    );
    const old = onA.git("commit-tree", padded, "-m", "old import").trim();
    const merged = onA
      .git("commit-tree", "HEAD^{tree}", "-p", "HEAD", "-p", old, "-m", "merge old history")
      .trim();
    onA.git("update-ref", "refs/heads/main", merged);
    onA.git("push", "-q", "origin", "main");
    cliTurn(onA, "s", "1", () =>
      onA.write({ ".GIT": "a file, on a case-sensitive disk\n", "app.ts": "2\n" }),
    );
    onA.ok("push");
    // A new machine's empty repository: every object comes through the fetch.
    const onB = b.repo("legacy-b");
    onB.git("remote", "add", "origin", remote);
    const fetched = onB.cli(["fetch", "--json"]);
    expect(fetched.status, fetched.stderr).toBe(0);
    expect(fetched.json.sessions).toEqual([{ session: "s", turns: 1, status: "created" }]);
    const [turn] = onB.cli(["log", "--json", "--session", "s"]).json;
    expect(turn.changed).toEqual([".GIT", "app.ts"]);
  });

  it("cannot get a file outside the workspace deleted, read or written through a session journal naming ../victim.txt", () => {
    const remote = bare("journals.git");
    const onA = originRepo(a, "journal-a", remote, { "f.txt": "0\n" });
    cliTurn(onA, "s", "1", () => onA.write({ "f.txt": "1\n" }));
    onA.ok("push");
    const [ref] = ghostRefs(a, remote).filter((r) => r.includes("/sessions/"));
    // The journal's end record now claims a file beside the workspace as the turn's change.
    const journal = a.git(remote, "cat-file", "blob", `${ref}:journal.jsonl`);
    const edited = journal.replace('"changed":["f.txt"]', '"changed":["../victim.txt","f.txt"]');
    expect(edited).not.toBe(journal);
    const origin = a.git(remote, "rev-parse", `${ref}:origin.json`).trim();
    const blob = hashObject(a, remote, "blob", Buffer.from(edited));
    const tree = hashObject(
      a,
      remote,
      "tree",
      Buffer.concat([
        Buffer.from("100644 journal.jsonl\0"),
        Buffer.from(blob, "hex"),
        Buffer.from("100644 origin.json\0"),
        Buffer.from(origin, "hex"),
      ]),
    );
    const commit = hashObject(
      a,
      remote,
      "commit",
      Buffer.from(`tree ${tree}\nauthor x <x> 0 +0000\ncommitter x <x> 0 +0000\n\nforged\n`),
    );
    a.git(remote, "update-ref", ref, commit);

    const onB = cloneOf(b, remote, "journal-b");
    const victim = path.join(onB.dir, "..", "victim.txt");
    writeFileSync(victim, "not the workspace's\n");
    const run = onB.cli(["fetch", "--json"]);
    expect(run.status).toBe(3);
    const fetched = run.json;
    expect(fetched.sessions).toEqual([]);
    expect(fetched.conflicts).toEqual([
      {
        session: "s",
        reason: expect.stringContaining(
          "names paths outside the workspace, forged or damaged: it was not fetched",
        ),
      },
    ]);
    expect(onB.ok("sessions")).toEqual([]);
    onB.write({ "f.txt": "mine\n" });
    expect(onB.cli(["rewind", "--session", "s", "--to", "1", "--force"]).status).toBe(1);
    expect(readFileSync(victim, "utf8")).toBe("not the workspace's\n");
    expect(onB.read("f.txt")).toBe("mine\n");
  });
});
