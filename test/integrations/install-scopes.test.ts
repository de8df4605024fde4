import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Sandbox } from "../helpers/repo.js";

let sandbox: Sandbox;
beforeEach(() => {
  sandbox = new Sandbox();
});
afterEach(() => sandbox.cleanup());

function writeJson(file: string, value: unknown): void {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`);
}

describe("install says what it left alone and what would run twice", () => {
  it("names a slash command file of the user's that it left as it was, in text and --json", () => {
    const dir = sandbox.dir("project");
    const mine = path.join(dir, ".claude", "commands", "ghostcommit-redo.md");
    mkdirSync(path.dirname(mine), { recursive: true });
    writeFileSync(mine, "my own redo\n");
    const report = sandbox.ok(dir, "install", "claude-code", "--project");
    expect(report.commandsLeftAsTheyWere).toEqual([mine]);
    const human = sandbox.cli(dir, ["install", "claude-code", "--project"]);
    expect(human.status, human.stderr).toBe(0);
    expect(human.stdout).toContain(`left ${mine} as it was: it is your own command`);
    expect(readFileSync(mine, "utf8")).toBe("my own redo\n");
  });
});
