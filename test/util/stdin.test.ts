import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { Sandbox } from "../helpers/repo.js";

const DIST_STDIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../dist/util/stdin.js");
const sandbox = new Sandbox();
afterAll(() => sandbox.cleanup());

describe("a hook's event on stdin", () => {
  it("is seen when the process was kept from running past the wait (a loaded machine), the event there all along", () => {
    // The loader waits 10 ms for the event to decide whether to start the snapshot's status ahead.
    // A process off the CPU past that wait, its event written before it started, must still see it.
    const script = path.join(sandbox.home, "late.mjs");
    writeFileSync(
      script,
      `import { hookEventWithin } from ${JSON.stringify(DIST_STDIN)};
const pending = hookEventWithin(10);
for (const until = Date.now() + 40; Date.now() < until; ) {} // busy past the wait
process.stdout.write(JSON.stringify(await pending));
`,
    );
    const event = JSON.stringify({ session_id: "s", hook_event_name: "Stop", stop_hook_active: false });
    const run = spawnSync(process.execPath, [script], { input: event, encoding: "utf8", env: sandbox.env });
    expect(run.stderr).toBe("");
    expect(JSON.parse(run.stdout)).toBe(event);
  });
});
