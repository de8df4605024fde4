import { describe, expect, it } from "vitest";
import { fileSandbox } from "../helpers/support.js";

const { repo } = fileSandbox();

describe("a restore that changes the workspace's store setting", () => {
  it("prints a way back that names the store its safety snapshot is in, and that runs as printed", () => {
    const r = repo({ "a.txt": "a\n" });
    const old = r.ok("--store", "repo", "snapshot", "-m", "before the config").id;
    r.write({ ".ghostcommit.json": '{"store": "repo"}\n', "a.txt": "b\n" });
    r.ok("snapshot", "-m", "with the config"); // the repo store, by the setting
    const restored = r.cli(["restore", old]);
    expect(restored.status, restored.stderr).toBe(0);
    expect(r.exists(".ghostcommit.json")).toBe(false); // the setting went with the restore
    const undo = /undo with: (.*)$/m.exec(restored.stdout)?.[1] ?? "";
    expect(undo).toMatch(/^ghostcommit --store repo restore [0-9a-f]{12}$/);
    const safety = undo.split(" ").at(-1) as string;
    // Without the store, the safety snapshot is not found here, and the message says where it is.
    const lost = r.cli(["restore", safety]);
    expect(lost.status).toBe(1);
    expect(lost.stderr).toBe(
      `ghostcommit: no snapshot ${safety} in this workspace's shadow store; it is in its repo store (\`--store repo\` reaches it)\n`,
    );
    // As printed, it runs: the config and the file come back.
    r.ok(...undo.split(" ").slice(1));
    expect([r.read("a.txt"), r.read(".ghostcommit.json")]).toEqual(["b\n", '{"store": "repo"}\n']);
  });
});
