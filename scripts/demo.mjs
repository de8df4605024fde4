#!/usr/bin/env node
// A scripted end-to-end tour in a throw-away repository: snapshot, simulated agent changes,
// diff, restore, redo of the restore. Everything lives in a temp directory; nothing of yours is read.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const cli = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "dist", "ghostcommit.cjs");
const home = mkdtempSync(path.join(os.tmpdir(), "ghostcommit-demo-"));
const repo = path.join(home, "project");
const env = {
  ...process.env,
  GIT_CONFIG_GLOBAL: path.join(home, "gitconfig"),
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_AUTHOR_NAME: "Demo",
  GIT_AUTHOR_EMAIL: "demo@example.com",
  GIT_COMMITTER_NAME: "Demo",
  GIT_COMMITTER_EMAIL: "demo@example.com",
  GHOSTCOMMIT_HOME: path.join(home, "data"),
};
writeFileSync(env.GIT_CONFIG_GLOBAL, "");

const step = (title) => console.log(`\n\x1b[1m== ${title}\x1b[0m`);
const git = (...args) => execFileSync("git", args, { cwd: repo, env, encoding: "utf8" });
const gc = (...args) => {
  console.log(`$ ghostcommit ${args.join(" ")}`);
  const out = execFileSync(process.execPath, [cli, ...args], { cwd: repo, env, encoding: "utf8" });
  process.stdout.write(out.replace(/^/gm, "  "));
  return out;
};
const write = (rel, text) => {
  mkdirSync(path.dirname(path.join(repo, rel)), { recursive: true });
  writeFileSync(path.join(repo, rel), text);
};

try {
  step("A small project with a commit, an untracked note and a staged change");
  mkdirSync(repo, { recursive: true });
  git("init", "-q", "-b", "main");
  write("src/app.js", "console.log('hello');\n");
  write("README.md", "# Demo\n");
  write("node_modules/dep/index.js", "module.exports = 1;\n");
  write(".gitignore", "*.log\n");
  git("add", "src", "README.md", ".gitignore");
  git("commit", "-q", "-m", "initial");
  write("notes.txt", "my untracked notes\n");
  write("README.md", "# Demo\n\nstaged line\n");
  git("add", "README.md");
  console.log(git("status", "--short").replace(/^/gm, "  "));

  step("Snapshot before the agent's turn");
  gc("snapshot", "-m", "before the agent");
  const [snap] = JSON.parse(
    execFileSync(process.execPath, [cli, "list", "--json"], { cwd: repo, env, encoding: "utf8" }),
  );
  gc("list");

  step("The agent edits, deletes and creates files (some through a shell, unseen by any editor hook)");
  write("src/app.js", "console.log('hello, world');\nprocess.exit(1);\n");
  rmSync(path.join(repo, "notes.txt"));
  write("src/generated.js", "// generated\n");
  gc("diff", snap.id.slice(0, 12));

  step("Rewind the files to the snapshot");
  const restored = gc("restore", snap.id.slice(0, 12));
  console.log(`  notes.txt is back: ${JSON.stringify(readFileSync(path.join(repo, "notes.txt"), "utf8"))}`);
  console.log(
    `  the staged change is still staged:\n${git("diff", "--cached", "--stat").replace(/^/gm, "    ")}`,
  );

  step("Changed your mind? The restore's safety snapshot undoes it");
  const safety = /restore ([0-9a-f]{12})/.exec(restored)?.[1];
  gc("restore", safety);
  console.log(
    `  src/generated.js is back: ${readFileSync(path.join(repo, "src/generated.js"), "utf8").trim()}`,
  );

  step("The store never touched your repository");
  console.log(`  git status:\n${git("status", "--short").replace(/^/gm, "    ")}`);
  gc("doctor");
} finally {
  rmSync(home, { recursive: true, force: true });
}
