import { describe, expect, it } from "vitest";
import { fileSandbox } from "../helpers/support.js";
import { snapshotIn } from "../session/support.js";

const { repo } = fileSandbox();

/** The `skip` lines of a command's human output. */
const skipLines = (stdout: string) => stdout.split("\n").filter((l) => l.startsWith("  skip"));

describe("why an excluded path is skipped, as the command line says it", () => {
  it("names a submodule a rewind leaves at its commit, not a snapshot that lacks it (both hold it)", () => {
    const lib = repo({ "lib.c": "v1\n" });
    const r = repo({ "a.txt": "a\n" });
    r.addSubmodule(lib, "vendor/sub");
    r.ok("turn", "begin", "--session", "s", "--turn", "1");
    // The agent's shell commits inside the submodule and writes a file.
    r.sandbox.git(
      r.path("vendor/sub"),
      "-c",
      "user.name=A",
      "-c",
      "user.email=a@x",
      "commit",
      "-q",
      "--allow-empty",
      "-m",
      "x",
    );
    r.write({ "q.ts": "q\n" });
    r.ok("turn", "end", "--session", "s", "--turn", "1");
    const rewound = r.cli(["rewind", "--session", "s", "--to", "1"]);
    expect([rewound.status, skipLines(rewound.stdout)]).toEqual([
      0,
      [
        "  skip   vendor/sub (excluded: a submodule, which a restore never enters nor checks out at another commit, so it is left as it is)",
      ],
    ]);
  });

  it("says many files of one directory left for one reason on one line; --json lists each", async () => {
    // Found in a trial: an unreadable folder of 80 files printed 80 identical long lines.
    const docs = Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`docs/n${i}.md`, `${i}\n`]));
    const r = repo({ ...docs, "guide/a.md": "a\n", "src/a.ts": "a\n" });
    r.write({
      ...Object.fromEntries(Object.keys(docs).map((p) => [p, "draft\n"])),
      "guide/a.md": "b\n",
      "src/a.ts": "a2\n",
    });
    const snap = await snapshotIn(r);
    r.git("checkout", "-q", "--", ".");
    r.git("sparse-checkout", "set", "--no-cone", "/*", "!/docs/", "!/guide/");
    const restored = r.cli(["restore", snap.id]);
    expect([restored.status, skipLines(restored.stdout).sort()]).toEqual([
      0,
      [
        "  skip   docs/ (12 files in it, each excluded: outside the sparse checkout (not on disk), so it is left as it is)",
        "  skip   guide/a.md (excluded: outside the sparse checkout (not on disk), so it is left as it is)",
      ],
    ]);
    expect(r.ok("restore", snap.id, "--dry-run").skipped).toHaveLength(13);
  });

  it("names an assume-unchanged file's local edit, and a file outside the sparse checkout", async () => {
    const r = repo({ "database.yml": "db: prod\n", "docs/notes.md": "notes\n", "src/a.ts": "a\n" });
    r.write({ "database.yml": "db: staging\n", "docs/notes.md": "draft\n", "src/a.ts": "a2\n" });
    const snap = await snapshotIn(r);
    r.git("checkout", "-q", "--", ".");
    r.git("sparse-checkout", "set", "--no-cone", "/*", "!/docs/"); // docs/ leaves the disk
    r.git("update-index", "--assume-unchanged", "database.yml");
    r.write({ "database.yml": "db: localhost\n" }); // the user's local-only edit
    const restored = r.cli(["restore", snap.id]);
    expect([restored.status, skipLines(restored.stdout).sort()]).toEqual([
      0,
      [
        "  skip   database.yml (excluded: its bytes on disk are an edit no snapshot holds (assume-unchanged, skip-worktree, or made while the restore ran), so it is left as it is)",
        "  skip   docs/notes.md (excluded: outside the sparse checkout (not on disk), so it is left as it is)",
      ],
    ]);
    expect(r.ok("restore", snap.id, "--dry-run").skipped).toEqual([
      { path: "database.yml", reason: "excluded", detail: "local-edit" },
      { path: "docs/notes.md", reason: "excluded", detail: "sparse-checkout" },
    ]);
  });

  it("keeps saying a snapshot lacks it where one does (a file ignored now)", async () => {
    const r = repo({ "a.txt": "a\n" });
    r.write({ "build.log": "log\n" });
    const snap = await snapshotIn(r);
    r.remove("build.log");
    r.write({ ".git/info/exclude": "*.log\n" }); // ignored now: the safety snapshot cannot hold it
    const restored = r.cli(["restore", snap.id]);
    expect(skipLines(restored.stdout)).toEqual([
      "  skip   build.log (excluded: the target or the safety snapshot lacks it, so it is left as it is)",
    ]);
  });
});
