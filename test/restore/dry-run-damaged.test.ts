import { existsSync, unlinkSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { fileSandbox } from "../helpers/support.js";
import { doctorIn } from "../helpers/in-process.js";

const { repo } = fileSandbox();

describe("a restore's dry run on a store missing a blob the restore needs", () => {
  it("fails as the restore would, naming the object, instead of promising a write", async () => {
    const r = repo({ "a.txt": "a\n" });
    r.write({ "unique.txt": `only the store has this ${r.dir}\n` });
    const snap = r.ok("snapshot").id;
    const store = (await doctorIn(r)).store as string;
    const blob = r.git("hash-object", "unique.txt").trim();
    const object = path.join(store, "git", "objects", blob.slice(0, 2), blob.slice(2));
    expect(existsSync(object)).toBe(true);
    unlinkSync(object);
    r.write({ "unique.txt": "changed\n" });
    const message = `ghostcommit: the store is missing object ${blob}; nothing was changed: \`ghostcommit doctor\` names the snapshots it damages, \`doctor --repair\` drops them\n`;
    for (const args of [
      ["restore", snap, "--dry-run"],
      ["restore", snap],
    ]) {
      const result = r.cli(args);
      expect(result.status).toBe(1);
      expect(result.stderr).toBe(message);
    }
    expect(r.read("unique.txt")).toBe("changed\n");
  });
});
