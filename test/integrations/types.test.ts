import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { Sandbox } from "../helpers/repo.js";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const sandbox = new Sandbox();
afterAll(() => sandbox.cleanup());

/** The README's library example, as a TypeScript user copies it. */
function readmeExample(): string {
  const readme = readFileSync(path.join(ROOT, "README.md"), "utf8");
  const library = readme.slice(readme.indexOf("\n## Library"));
  const block = /```ts\n([\s\S]*?)```/.exec(library)?.[1];
  if (!block) throw new Error("no ts block under ## Library");
  // What the example leaves to the reader: where prompts come from, and the agent.
  return `${block}
declare function userPrompts(): AsyncIterable<string>;
declare const agent: { run(prompt: string, hooks: { beforeEdit(file: string): Promise<unknown> }): Promise<void> };
export {};
`;
}

describe("the published types", () => {
  it("type-check the README's library example in a project whose tsconfig lists no global types", () => {
    // TypeScript 6 and later list none by default: the package's own reference brings Node's.
    const project = sandbox.dir("consumer");
    mkdirSync(path.join(project, "node_modules", "@types"), { recursive: true });
    symlinkSync(ROOT, path.join(project, "node_modules", "ghostcommit"));
    symlinkSync(
      path.join(ROOT, "node_modules", "@types", "node"),
      path.join(project, "node_modules", "@types", "node"),
    );
    writeFileSync(path.join(project, "package.json"), '{"type": "module"}\n');
    const options = {
      module: "nodenext",
      moduleResolution: "nodenext",
      target: "es2022",
      strict: true,
      types: [],
    };
    // One compiler run for both files (each run costs seconds): the example as written, and
    // (not vacuous) the same with a misspelled option, which must be the one error reported.
    writeFileSync(
      path.join(project, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: { ...options, noEmit: true },
        files: ["agent.ts", "typo.ts", "calls.ts"],
      }),
    );
    writeFileSync(path.join(project, "agent.ts"), readmeExample());
    writeFileSync(
      path.join(project, "typo.ts"),
      readmeExample().replace("{ dryRun: true }", "{ dryrun: true }"),
    );
    // What the README says of calls its example does not make: `endTurn()` ends the open turn, and
    // a redo's `safety` is always there (null for a dry run).
    writeFileSync(
      path.join(project, "calls.ts"),
      `import { openWorkspace } from "ghostcommit";
const session = (await openWorkspace()).session("s");
const ended: string[] = (await session.endTurn()).changed;
const safety: string | null = (await session.redo({ dryRun: true })).safety;
export { ended, safety };
`,
    );
    const tsc = spawnSync(
      process.execPath,
      [path.join(ROOT, "node_modules", "typescript", "bin", "tsc"), "-p", "."],
      { cwd: project, encoding: "utf8" },
    );
    const errors = (tsc.stdout + tsc.stderr).split("\n").filter((line) => /error TS/.test(line));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/^typo\.ts\(\d+,\d+\): error TS\d+: .*'dryrun' does not exist/);
  });
});
