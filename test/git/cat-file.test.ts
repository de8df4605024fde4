import { execFileSync } from "node:child_process";
import { afterAll, describe, expect, it } from "vitest";
import { CatFile } from "../../src/git/cat-file.js";
import { Sandbox } from "../helpers/repo.js";

const sandbox = new Sandbox();
afterAll(() => sandbox.cleanup());
const dir = sandbox.dir("cat-file");
sandbox.git(dir, "init", "-q", "--bare");
const hashObject = (content: string) =>
  execFileSync("git", ["hash-object", "-w", "--stdin"], { cwd: dir, env: sandbox.env, input: content })
    .toString()
    .trim();

const contents = Array.from({ length: 40 }, (_, i) => `object ${i}\n${"x".repeat(i * 97)}\n`);
const ids = contents.map(hashObject);
const missing = "0123456789abcdef0123456789abcdef01234567";

describe("one git cat-file for many reads", () => {
  it("answers reads made side by side in one turn, each with its own object, a missing one with null", async () => {
    const cat = new CatFile(dir, sandbox.env);
    try {
      const asked = [...ids.slice(0, 20), missing, ...ids.slice(20)];
      const answers = await Promise.all(asked.map((id) => cat.read(id)));
      expect(answers.map((a) => a?.content.toString() ?? null)).toEqual([
        ...contents.slice(0, 20),
        null,
        ...contents.slice(20),
      ]);
      expect(answers.every((a) => a === null || a.type === "blob")).toBe(true);
    } finally {
      cat.close();
    }
  });

  it("answers reads made one after another, and reads made from within answers, in later turns", async () => {
    const cat = new CatFile(dir, sandbox.env);
    try {
      for (let i = 0; i < 5; i++) expect((await cat.read(ids[i]))?.content.toString()).toBe(contents[i]);
      // Each answer asks for the next two: the requests of one turn go out together, the next turn's later.
      const chained = await cat
        .read(ids[5])
        .then((first) =>
          Promise.all([first, cat.read(ids[6]), cat.read(ids[7])]).then((three) =>
            Promise.all([...three, cat.read(missing), cat.read(ids[8])]),
          ),
        );
      expect(chained.map((a) => a?.content.toString() ?? null)).toEqual([
        contents[5],
        contents[6],
        contents[7],
        null,
        contents[8],
      ]);
      await expect(cat.readExpect(ids[9], "tree")).rejects.toThrow(/not a tree/);
    } finally {
      cat.close();
    }
  });
});
