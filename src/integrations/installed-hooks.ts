import { readFileSync } from "node:fs";
import path from "node:path";
import type { DoctorCheck } from "../maintenance/doctor.js";
import type { StoreContext } from "../store/context.js";
import type { DoctorProblem } from "../types.js";
import { brokenCommands } from "./claude-commands.js";
import { codexHookSwitches } from "./codex-switches.js";
import { geminiSwitchesOff } from "./gemini-switches.js";
import {
  filesWithOurHooks,
  handlerCommands,
  runsTwice,
  settingsFile,
  staleMatchers,
  uninstallCommand,
  whyNotRunnable,
} from "./hook-check.js";
import { parseJsonc } from "./jsonc.js";
import { type InstallSpec, type Scope, SPECS } from "./specs.js";

/** Doctor check: an agent started in the workspace loads ghostcommit's hooks from two files. */
function installedTwice(spec: InstallSpec, root: string): DoctorProblem | null {
  const files = filesWithOurHooks(spec, root);
  for (let i = 0; i < files.length; i++) {
    for (let j = i + 1; j < files.length; j++) {
      if (!runsTwice(spec, files[i].commands, files[j].commands)) continue;
      const [a, b] = [files[i], files[j]];
      const removes = (f: typeof a) => `\`${uninstallCommand(spec.agent, f.scope, f.file, root)}\``;
      const how =
        a.scope === "user" ? `${removes(b)} or ${removes(a)}` : `${removes(b)} removes those of ${b.file}`;
      return {
        code: "hook-installed-twice",
        message: `ghostcommit's ${spec.label} hooks are in both ${a.file} and ${b.file}, which ${spec.label} loads for this workspace, so it runs each event's hook twice: keep one (${how})`,
        path: b.file,
      };
    }
  }
  return null;
}

/** Doctor check: every installed ghostcommit hook (user settings, and this workspace's) still runs. */
export const checkInstalledHooks: DoctorCheck = async (engine: StoreContext) => {
  const problems: DoctorProblem[] = [];
  let geminiInstalled = false;
  let codexInstalled = false;
  for (const spec of Object.values(SPECS)) {
    const twice = installedTwice(spec, engine.root);
    if (twice) problems.push(twice);
    for (const scope of ["user", "project"] as Scope[]) {
      const file = settingsFile(spec, scope, engine.root);
      if (file === null) continue; // install refuses that setting and says why
      let text: string;
      try {
        text = readFileSync(file, "utf8");
      } catch {
        continue; // absent, or unreadable: no hook runs from it
      }
      let settings: unknown;
      try {
        settings = parseJsonc(text); // comments, as Gemini CLI allows them
      } catch {
        // Not ours to judge, unless it names us: the agent may fail to read it, or skip our hook.
        if (text.includes("ghostcommit")) {
          problems.push({
            code: "hook-command-broken",
            message: `cannot check the ${spec.label} hook in ${file}: the file is not valid JSON`,
            path: file,
          });
        }
        continue;
      }
      const installed = handlerCommands(settings, spec.agent);
      if (spec.agent === "gemini" && installed.size > 0) geminiInstalled = true;
      if (spec.agent === "codex" && installed.size > 0) codexInstalled = true;
      const again = `run \`ghostcommit install ${spec.agent}${scope === "project" ? " --project" : ""}\` again`;
      for (const command of new Set([...installed.values()].flat())) {
        const why = whyNotRunnable(command);
        if (!why) continue;
        problems.push({
          code: "hook-command-broken",
          message: `the ${spec.label} hook in ${file} cannot run (${why}); ${again}`,
          path: file,
        });
      }
      // Installed by an older release: an event added since (an end of turn) would leave turns
      // open; a matcher widened since (MCP tools) would leave those tools' edits unmarked.
      const missing = Object.keys(spec.entries("")).filter((event) => !installed.has(event));
      const lacks = missing.length > 0 ? [`lack ${missing.join(", ")}`] : [];
      const differ = installed.size > 0 ? staleMatchers(spec, settings) : [];
      if (differ.length > 0)
        lacks.push(`leave out tools this release hooks (${differ.join("; ")}), so their calls go unrecorded`);
      if (installed.size > 0 && lacks.length > 0) {
        problems.push({
          code: "hook-install-outdated",
          message: `the ${spec.label} hooks in ${file} ${lacks.join(", and ")}; ${again}`,
          path: file,
        });
      }
    }
  }
  // Installed, yet Gemini's own switches keep them from running: undo the user counts on is not there.
  if (geminiInstalled) {
    for (const message of geminiSwitchesOff(engine.root))
      problems.push({ code: "hook-switched-off", message });
  }
  // Claude Code's slash commands name Node and the CLI as the hooks do (an edited one is kept by install).
  for (const scope of ["user", "project"] as Scope[]) {
    const broken = await brokenCommands(scope, engine.root);
    if (broken.length === 0) continue;
    const again = `ghostcommit install claude-code${scope === "project" ? " --project" : ""}`;
    const names = broken.map((b) => `/${path.basename(b.file, ".md")}`).join(", ");
    const whys = [...new Set(broken.map((b) => b.why))].join("; ");
    const dir = path.dirname(broken[0].file);
    problems.push({
      code: "hook-command-broken",
      message: `the slash command${broken.length === 1 ? "" : "s"} ${names} in ${dir} cannot run (${whys}); run \`${again}\` again (one you edited is kept: remove it first)`,
      path: broken.length === 1 ? broken[0].file : dir,
    });
  }
  if (codexInstalled) {
    for (const message of codexHookSwitches(engine.root).off)
      problems.push({ code: "hook-switched-off", message });
  }
  return problems;
};
