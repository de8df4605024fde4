import { execFileSync } from "node:child_process";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { Sandbox } from "../helpers/repo.js";
import { DIST, killChildren, lineOf, runShortLived } from "../helpers/short-lived.js";

/**
 * A git command started ahead (`GitAhead`): in a short-lived process, once its status runs, a
 * `git diff-tree --stdin` waits for the trees to compare. Run in a Node process of its own, as
 * the command-line tool runs, under `strace -f`.
 */

const sandbox = new Sandbox();
afterAll(() => sandbox.cleanup());
const repo = sandbox.repo("ahead", { "a.txt": "1\n", "dir/b.txt": "2\n" });
const treeOf = (rev: string) => repo.git("rev-parse", `${rev}^{tree}`).trim();
const before = treeOf("HEAD");
repo.write({ "a.txt": "changed\n", "dir/new.txt": "3\n" });
repo.git("add", "-A");
repo.git("commit", "-q", "-m", "second");
const after = treeOf("HEAD");
const gitDir = path.join(repo.dir, ".git");

/**
 * Runs `body` with `ahead`, a GitAhead of `diff-tree --stdin`, and `cat`, a CatFile, once they
 * could start (`setup` runs first, ahead of the command's git).
 */
const traced = (name: string, body: string, setup = "") =>
  runShortLived(sandbox, name, {
    imports: `import { GitAhead } from ${JSON.stringify(`${DIST}/git/exec.js`)};
import { DIFF_TREE } from ${JSON.stringify(`${DIST}/git/diff-tree.js`)};
import { CatFile } from ${JSON.stringify(`${DIST}/git/cat-file.js`)};`,
    setup: `const ahead = new GitAhead([...DIFF_TREE, "--stdin"], { cwd: ${JSON.stringify(repo.dir)}, env: { GIT_DIR: ${JSON.stringify(gitDir)} } });
const cat = new CatFile(${JSON.stringify(repo.dir)}, { GIT_DIR: ${JSON.stringify(gitDir)} });
${setup}`,
    body,
    syscalls: "execve,write,kill",
  });

const gitStarts = (lines: string[]) =>
  lines.filter((line) => /execve\("[^"]*\/git", \["git", "diff-tree"/.test(line) && / = 0$/.test(line));
const expected = execFileSync(
  "git",
  ["diff-tree", "-r", "-z", "--raw", "--no-renames", "--abbrev=40", before, after],
  {
    cwd: repo.dir,
    env: sandbox.env,
  },
).toString("latin1");

describe("a git command started ahead", () => {
  it("starts while the command's git runs and answers once given its input, as git run then would", () => {
    const { status, stdout, lines } = traced(
      "told",
      `writeSync(2, "run now\\n");
const { stdout } = await ahead.run("${before} ${after}\\n");
process.stdout.write(stdout.toString("latin1"));`,
    );
    expect(status).toBe(0);
    expect(stdout).toBe(`${before} ${after}\n${expected}`);
    const starts = gitStarts(lines);
    expect(starts).toHaveLength(1); // one git, started before it was wanted
    expect(lines.indexOf(starts[0])).toBeLessThan(lineOf(lines, /write\(2, "run now/));
  });

  it("ends with the command when never given its input, and a bad input is git's failure", () => {
    const untold = traced("untold", `writeSync(2, "done\\n");`);
    expect(untold.status).toBe(0);
    expect(gitStarts(untold.lines)).toHaveLength(1);
    expect(untold.lines.some((line) => /\+\+\+ exited with 0 \+\+\+/.test(line))).toBe(true);
    // A tree git cannot find: git skips the line, and the answer, without it, reads as a failure.
    const bad = traced(
      "bad",
      `const { parseStdinDiff } = await import(${JSON.stringify(`${DIST}/git/diff-tree.js`)});
const missing = "${"0".repeat(40)}";
const { stdout, stderr } = await ahead.run(\`\${missing} ${after}\\n\`);
try {
  parseStdinDiff(stdout, missing, "${after}", stderr);
  process.stdout.write("answered");
} catch (error) {
  process.stdout.write(\`\${error.code}: \${error.message}\`);
}`,
    );
    expect(bad.stdout).toMatch(/^git-failed: git diff-tree could not compare 0{40} with [0-9a-f]{40}/);
  });

  it("runs git then when the one started ahead is gone", () => {
    const { status, stdout, lines } = traced(
      "gone",
      `${killChildren("git")}
const { stdout } = await ahead.run("${before} ${after}\\n");
process.stdout.write(stdout.toString("latin1"));`,
    );
    expect(status).toBe(0);
    expect(lineOf(lines, /kill\(\d+, SIGKILL\)/)).toBeGreaterThanOrEqual(0);
    expect(gitStarts(lines)).toHaveLength(2);
    expect(stdout).toBe(`${before} ${after}\n${expected}`);
  });

  it("starts an object reader ahead for a command that reads objects after its status, not once closed", () => {
    const catStarts = (lines: string[]) =>
      lines.filter((line) => /execve\("[^"]*\/git", \["git", "cat-file"/.test(line) && / = 0$/.test(line));
    const used = traced(
      "cat-ahead",
      `writeSync(2, "read now\\n");
process.stdout.write((await cat.readExpect("${after}", "tree")).length > 0 ? "read" : "empty");
cat.close();`,
      "cat.startAhead();",
    );
    expect(used.status).toBe(0);
    expect(used.stdout).toBe("read");
    const starts = catStarts(used.lines);
    expect(starts).toHaveLength(1);
    expect(used.lines.indexOf(starts[0])).toBeLessThan(lineOf(used.lines, /write\(2, "read now/));
    // Closed before its command's git started (the command failed early): no reader is left waiting.
    const closed = traced("cat-closed", `writeSync(2, "done\\n");`, "cat.startAhead(); cat.close();");
    expect(closed.status).toBe(0);
    expect(catStarts(closed.lines)).toHaveLength(0);
  });
});
