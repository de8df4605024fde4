import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { Sandbox } from "../helpers/repo.js";
import { claudeEvents as claude, cursor, gemini } from "./events.js";
import { installedCommand, shellHook } from "./hook-helpers.js";

// A turn whose snapshot fails leaves a hole in undo, and on a full disk the log `doctor` reads
// cannot be written either: the hook tells the person in its answer, as the agents show it.
// The data dir sits on a 4 MiB tmpfs (mounting needs root, as on the machines this suite runs
// on; elsewhere the test is skipped); the repository is on the ordinary disk.
const sandbox = new Sandbox();
const disk = sandbox.dir("disk");
const mounted = spawnSync("mount", ["-t", "tmpfs", "-o", "size=4m", "tmpfs", disk]).status === 0;
sandbox.env.GHOSTCOMMIT_HOME = path.join(disk, "data");
afterAll(() => {
  if (mounted) spawnSync("umount", [disk]);
  sandbox.cleanup();
});
const filler = path.join(disk, "filler");

/** Fills the tmpfs to its last byte. */
function fillDisk(): void {
  spawnSync("dd", ["if=/dev/zero", `of=${filler}`, "bs=64k"], { stdio: "ignore" });
}

const ENOSPC = "no space left on the device (ENOSPC)";

describe("a hook whose snapshot fails on a full disk", () => {
  (mounted ? it : it.skip)(
    "tells the user in that event's answer, exits 0, and snapshots again once there is space",
    () => {
      const repo = sandbox.repo("repo", { ".gitignore": ".env\n", "src/a.js": "v0\n" });
      repo.write({ ".env": "KEY=old\n" });
      const send = (event: object, agent = "claude-code") => {
        const result = shellHook(sandbox, installedCommand(agent), event, repo.dir);
        expect(result.status, result.stderr).toBe(0);
        return result.stdout.trim();
      };
      const told = (answer: string) => JSON.parse(answer).systemMessage as string;

      expect(send(claude.prompt(repo.dir, "s1", "one"))).toBe("");
      repo.write({ "src/a.js": "v1\n" });
      expect(send(claude.stop(repo.dir, "s1"))).toBe("");
      expect(send(claude.prompt(repo.dir, "s1", "two"))).toBe("");

      // The turn's end cannot store what the agent wrote.
      fillDisk();
      repo.write({ "src/a.js": "v2\n", "model.bin": randomBytes(300 * 1024) });
      const end = told(send(claude.stop(repo.dir, "s1")));
      expect(end).toMatch(
        /^ghostcommit: no snapshot at the end of this turn \(the next prompt closes it, as after an interrupt\): .+$/,
      );
      expect(end).toContain(ENOSPC);
      // An ignored file the agent is about to overwrite cannot be captured first.
      const touch = told(send(claude.write(repo.dir, "s1", path.join(repo.dir, ".env"))));
      expect(touch).toMatch(
        /^ghostcommit: the files this tool is about to change were not captured first \(a rewind cannot bring back their content before it\): .+$/,
      );
      expect(touch).toContain(ENOSPC);
      const begin = told(send(claude.prompt(repo.dir, "s1", "three")));
      expect(begin).toMatch(
        /^ghostcommit: no snapshot before this prompt's work, so this turn is not recorded \(what it changes is in no turn, and rewinding an earlier turn refuses those files\): .+$/,
      );
      expect(begin).toContain(ENOSPC);
      // Gemini CLI's answer keeps its fields and gains the message.
      const geminiBegin = JSON.parse(send(gemini(repo.dir, "g1", "BeforeAgent", { prompt: "go" }), "gemini"));
      expect(geminiBegin.systemMessage).toContain(ENOSPC);
      // Cursor's answer has no field for it: exactly what Cursor expects, before any work.
      const cursorBegin = cursor(repo.dir, "c1", "beforeSubmitPrompt", { prompt: "go", attachments: [] });
      expect(send(cursorBegin, "cursor")).toBe(JSON.stringify({ continue: true }));
      // Nothing of the user's was touched.
      expect(readFileSync(repo.path("src/a.js"), "utf8")).toBe("v2\n");

      // Space again: the next prompt closes the open turn and begins its own, quietly.
      rmSync(filler);
      expect(send(claude.prompt(repo.dir, "s1", "four"))).toBe("");
      repo.write({ "src/a.js": "v4\n" });
      expect(send(claude.stop(repo.dir, "s1"))).toBe("");
      const log = repo.cli(["log", "--session", "s1", "--json"]);
      expect(log.status, log.stderr).toBe(0);
      expect(log.json.map((t: { prompt: string }) => t.prompt)).toEqual(["one", "two", "four"]);
      // Turn 2 is undone with what the agent wrote after its last recorded state.
      const rewind = repo.cli(["rewind", "--session", "s1", "--to", "2", "--force", "--json"]);
      expect(rewind.status, rewind.stderr).toBe(0);
      expect(readFileSync(repo.path("src/a.js"), "utf8")).toBe("v1\n");
    },
  );
});
