import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createServer } from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sessionSandbox, turn } from "../session/support.js";
import { rawRequest, type RunningUi, startUi } from "./support.js";
import { logIn, doctorIn } from "../helpers/in-process.js";

const { sandbox, repo } = sessionSandbox();

describe("ghostcommit ui: the server's checks, as plain HTTP requests", () => {
  const r = repo({ "a.txt": "a0\n" });
  let ui: RunningUi;

  beforeAll(async () => {
    await turn(r, "s", "1", () => r.write({ "a.txt": "a1\n" }));
    ui = await startUi(r);
  });
  afterAll(async () => {
    await ui?.stop();
  });

  it("prints http://127.0.0.1:PORT/?token=… first and stops cleanly on SIGTERM", async () => {
    expect(ui.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=[0-9a-f]{48}$/);
    expect(ui.port).toBeGreaterThan(0);
    const other = await startUi(r);
    expect(other.token).not.toBe(ui.token);
    expect(await other.stop()).toBe(0);
  });

  it("refuses a request without the token (401) or with a wrong one (403), for the page, its files and the API", async () => {
    const host = { Host: `127.0.0.1:${ui.port}` };
    for (const target of ["/", "/app.js", "/app.css", "/api/timeline", "/api/diff?from=abcdef0"]) {
      expect((await rawRequest(ui.port, { path: target, headers: host })).status).toBe(401);
      const wrong = `${target}${target.includes("?") ? "&" : "?"}token=${"0".repeat(48)}`;
      expect((await rawRequest(ui.port, { path: wrong, headers: host })).status).toBe(403);
      expect(
        (await rawRequest(ui.port, { path: target, headers: { ...host, "X-Ghostcommit-Token": "nope" } }))
          .status,
      ).toBe(403);
    }
    const page = await rawRequest(ui.port, { path: `/?token=${ui.token}`, headers: host });
    expect(page.status).toBe(200);
    // HEAD (curl -I) with the URL ghostcommit printed: the same answer, without the body.
    for (const target of ["/", "/app.js"]) {
      const head = await rawRequest(ui.port, {
        method: "HEAD",
        path: `${target}?token=${ui.token}`,
        headers: host,
      });
      expect([target, head.status, head.body]).toEqual([target, 200, ""]);
    }
    expect(page.headers["content-security-policy"]).toContain("default-src 'none'");
    expect(page.headers["referrer-policy"]).toBe("no-referrer");
    const timeline = await rawRequest(ui.port, {
      path: "/api/timeline",
      headers: { ...host, "X-Ghostcommit-Token": ui.token },
    });
    expect(JSON.parse(timeline.body).sessions[0].turns[0].prompt).toBe("prompt 1");
  });

  it("answers only a browser's GET or HEAD of the page refused for its token with a page; the rest as JSON, statuses unchanged", async () => {
    const host = `127.0.0.1:${ui.port}`;
    const html = { Host: host, Accept: "text/html,application/xhtml+xml,*/*;q=0.8" };
    const wrong = `token=${"0".repeat(48)}`;
    const answer = async (options: Parameters<typeof rawRequest>[1]) => {
      const res = await rawRequest(ui.port, options);
      return [res.status, String(res.headers["content-type"]).split(";")[0], res.body.includes(ui.token)];
    };
    expect(await answer({ path: `/?${wrong}`, headers: html })).toEqual([403, "text/html", false]);
    expect(await answer({ path: "/", headers: html })).toEqual([401, "text/html", false]);
    expect(await answer({ method: "HEAD", path: `/?${wrong}`, headers: html })).toEqual([
      403,
      "text/html",
      false,
    ]);
    for (const options of [
      { path: `/?${wrong}`, headers: { Host: host } },
      { path: `/app.js?${wrong}`, headers: html },
      { path: `/api/timeline?${wrong}`, headers: html },
      { path: "/api/timeline", headers: { ...html, "X-Ghostcommit-Token": "nope" } },
      { method: "POST", path: "/", headers: { ...html, "X-Ghostcommit-Token": "nope" } },
    ]) {
      expect([options.path, ...(await answer(options))]).toEqual([
        options.path,
        403,
        "application/json",
        false,
      ]);
    }
    // A foreign Host is refused before the token is looked at, with or without it, as JSON.
    for (const target of ["/", `/?token=${ui.token}`]) {
      const res = await rawRequest(ui.port, {
        path: target,
        headers: { ...html, Host: `evil.example:${ui.port}` },
      });
      expect([res.status, JSON.parse(res.body).error.code]).toEqual([403, "bad-host"]);
    }
  });

  it("refuses a Host that is not its own address (DNS rebinding), even with the token", async () => {
    const withToken = { "X-Ghostcommit-Token": ui.token };
    for (const host of [
      `evil.example:${ui.port}`,
      `127.0.0.1:${ui.port + 1}`,
      "127.0.0.1",
      `localhost.evil.example:${ui.port}`,
    ]) {
      const res = await rawRequest(ui.port, { path: "/api/timeline", headers: { ...withToken, Host: host } });
      expect([host, res.status]).toEqual([host, 403]);
    }
    for (const host of [`127.0.0.1:${ui.port}`, `localhost:${ui.port}`]) {
      const res = await rawRequest(ui.port, { path: "/api/timeline", headers: { ...withToken, Host: host } });
      expect([host, res.status]).toEqual([host, 200]);
    }
  });

  it("refuses a request target no URL can be made of as such, not as its own internal error", async () => {
    for (const headers of [{}, { "X-Ghostcommit-Token": ui.token }] as Record<string, string>[]) {
      const res = await rawRequest(ui.port, { path: "//[", headers });
      // Before: 500 {"code":"internal","message":"TypeError: Invalid URL"}, even without the token.
      expect([res.status, JSON.parse(res.body).error.code]).toEqual([400, "usage"]);
    }
  });

  it("changes files only on a POST with the token in its header and a JSON body", async () => {
    const host = `127.0.0.1:${ui.port}`;
    const body = JSON.stringify({ session: "s", to: "1" });
    const json = { Host: host, "Content-Type": "application/json" };
    // A link or a form from another page: GET, token in the query, or a form's content type.
    const attempts: Parameters<typeof rawRequest>[1][] = [
      { method: "GET", path: `/api/rewind?token=${ui.token}`, headers: { Host: host } },
      { method: "POST", path: `/api/rewind?token=${ui.token}`, headers: json, body },
      {
        method: "POST",
        path: "/api/rewind",
        headers: { Host: host, "X-Ghostcommit-Token": ui.token, "Content-Type": "text/plain" },
        body,
      },
    ];
    const statuses = [];
    for (const attempt of attempts) statuses.push((await rawRequest(ui.port, attempt)).status);
    expect(statuses).toEqual([405, 401, 400]);
    expect(r.read("a.txt")).toBe("a1\n");
    const done = await rawRequest(ui.port, {
      method: "POST",
      path: "/api/rewind",
      headers: { ...json, "X-Ghostcommit-Token": ui.token },
      body: JSON.stringify({ session: "s", to: "1", dryRun: true }),
    });
    expect(JSON.parse(done.body)).toMatchObject({ rewoundTurns: ["1"], written: ["a.txt"], safety: null });
    expect(r.read("a.txt")).toBe("a1\n");
  });

  it("names a refusal's paths in doubt apart from the edited ones, without the command line's flag", async () => {
    // Two sessions' turns overlap and a file changes with no tool call reporting it: it may be
    // either's work, so rewinding one of them refuses it as uncertain.
    const both = repo({ "n.txt": "n0\n" });
    both.ok("turn", "begin", "--session", "p", "--turn", "1");
    both.ok("turn", "begin", "--session", "q", "--turn", "1");
    both.write({ "n.txt": "a shell's line\n" });
    both.ok("turn", "end", "--session", "p", "--turn", "1");
    both.ok("turn", "end", "--session", "q", "--turn", "1");
    const other = await startUi(both);
    try {
      const refused = await postJson(other, "/api/rewind", { session: "p", to: "1", dryRun: true });
      expect(refused.status).toBe(409);
      const body = JSON.parse(refused.body);
      expect(body).toMatchObject({ error: { code: "conflict" }, conflicts: ["n.txt"], uncertain: ["n.txt"] });
      expect(body.error.message).not.toMatch(/--force/);
    } finally {
      await other.stop();
    }
    expect(both.read("n.txt")).toBe("a shell's line\n");
  });

  it("refuses a rewind or redo with a misspelled or non-boolean flag, as the library does, changing nothing", async () => {
    const flags = repo({ "a.txt": "a0\n" });
    await turn(flags, "s", "1", () => flags.write({ "a.txt": "a1\n" }));
    const other = await startUi(flags);
    try {
      const refusal = async (route: string, body: object) => {
        const res = await postJson(other, route, { session: "s", ...body });
        return [res.status, JSON.parse(res.body).error?.message];
      };
      expect(await refusal("/api/rewind", { to: "1", dryRun: "yes" })).toEqual([
        400,
        "rewind: dryRun must be true or false",
      ]);
      expect(await refusal("/api/rewind", { to: "1", dryrun: true })).toEqual([
        400,
        'rewind: unknown option "dryrun" (did you mean dryRun?)',
      ]);
      expect(flags.read("a.txt")).toBe("a1\n");
      expect((await postJson(other, "/api/rewind", { session: "s", to: "1" })).status).toBe(200);
      expect(flags.read("a.txt")).toBe("a0\n");
      expect(await refusal("/api/redo", { dryRun: "yes" })).toEqual([
        400,
        "redo: dryRun must be true or false",
      ]);
      expect(await refusal("/api/redo", { Force: true })).toEqual([
        400,
        'redo: unknown option "Force" (did you mean force?)',
      ]);
      expect(flags.read("a.txt")).toBe("a0\n");
    } finally {
      await other.stop();
    }
  });

  it("answers the line counts of the turns it can count when one turn's snapshot is gone", async () => {
    const two = repo({ "a.txt": "a0\n" });
    await turn(two, "s", "1", () => two.write({ "a.txt": "a1\n" }));
    await turn(two, "s", "2", () => two.write({ "b.txt": "b1\nb2\n" }));
    const [first, second] = await logIn(two, "s");
    const other = await startUi(two);
    try {
      const gone = `${first.before}..${first.after}`;
      const kept = `${second.before}..${second.after}`;
      const counts = async () => {
        const res = await rawRequest(other.port, {
          path: `/api/counts?pairs=${gone},${kept}`,
          headers: { Host: `127.0.0.1:${other.port}`, "X-Ghostcommit-Token": other.token },
        });
        return [res.status, JSON.parse(res.body)];
      };
      expect(await counts()).toEqual([
        200,
        { [gone]: { added: 1, removed: 1 }, [kept]: { added: 2, removed: 0 } },
      ]);
      // Dropped while the server runs, after it counted the pair once.
      two.ok("drop", first.after);
      expect(await counts()).toEqual([200, { [kept]: { added: 2, removed: 0 } }]);
    } finally {
      await other.stop();
    }
  });

  it("gives a file's old and new mode in the diff, for a change of mode only or of kind", async () => {
    const modes = repo({ "run.sh": "#!/bin/sh\n", link: "a file\n" });
    await turn(modes, "s", "1", () => {
      modes.chmod("run.sh", 0o755);
      modes.remove("link");
      symlinkSync("run.sh", modes.path("link"));
    });
    const [done] = await logIn(modes, "s");
    const other = await startUi(modes);
    try {
      const res = await rawRequest(other.port, {
        path: `/api/diff?from=${done.before}&to=${done.after}`,
        headers: { Host: `127.0.0.1:${other.port}`, "X-Ghostcommit-Token": other.token },
      });
      const files = JSON.parse(res.body).files.map((f: Record<string, unknown>) => [
        f.path,
        f.status,
        f.oldMode,
        f.newMode,
      ]);
      expect(files).toEqual([
        ["link", "type-changed", "100644", "120000"],
        ["run.sh", "modified", "100644", "100755"],
      ]);
    } finally {
      await other.stop();
    }
  });

  it("says a session it does not know is unknown, not that it lacks the turn", async () => {
    for (const [route, body] of [
      ["/api/rewind", { session: "nosuch", to: "3", dryRun: true }],
      ["/api/redo", { session: "nosuch", dryRun: true }],
    ] as const) {
      const res = await postJson(ui, route, body);
      expect([route, res.status, JSON.parse(res.body).error]).toEqual([
        route,
        404,
        { code: "not-found", message: `no session nosuch in ${r.dir}` },
      ]);
    }
  });

  it('refuses "Rewind anyway" when a file its preview listed as overwritten was edited again since', async () => {
    const r = repo({ "package.json": "{}\n" });
    await turn(r, "s", "1", () => r.write({ "package.json": '{"v":1}\n' }));
    r.write({ "package.json": '{"v":1,"mine":true}\n' }); // the person's edit: a conflict
    const ui = await startUi(r);
    const rewind = (body: object) =>
      postJson(ui, "/api/rewind", { session: "s", to: "1", force: true, ...body });
    try {
      const preview = JSON.parse((await rewind({ dryRun: true })).body);
      expect(preview).toMatchObject({ overridden: ["package.json"], written: ["package.json"] });
      expect(Object.keys(preview.overriddenState)).toEqual(["package.json"]);
      // Edited once more while the person reads the preview: that edit was never shown.
      r.write({ "package.json": '{"v":1,"mine":true,"more":1}\n' });
      const refused = await rewind({ previewed: preview });
      expect(refused.status).toBe(409);
      expect(JSON.parse(refused.body).error).toEqual({
        code: "plan-changed",
        message:
          "the rewind is no longer the one previewed: it would now overwrite package.json, edited again since the preview; nothing was changed",
      });
      expect(r.read("package.json")).toBe('{"v":1,"mine":true,"more":1}\n');
      // The new preview, confirmed, rewinds.
      const again = JSON.parse(refused.body).preview;
      const done = await rewind({ previewed: again });
      expect([done.status, r.read("package.json")]).toEqual([200, "{}\n"]);
    } finally {
      await ui.stop();
    }
  });

  it("refuses a confirmed rewind that would now rewind more than its preview showed, changing nothing", async () => {
    const late = repo({ "a.txt": "a0\n" });
    await turn(late, "s", "1", () => late.write({ "a.txt": "a1\n" }));
    await turn(late, "s", "2", () => late.write({ "b.txt": "b2\n" }));
    const other = await startUi(late);
    const rewind = (body: object) => postJson(other, "/api/rewind", { session: "s", to: "2", ...body });
    try {
      const preview = JSON.parse((await rewind({ dryRun: true })).body);
      expect(preview).toMatchObject({ rewoundTurns: ["2"], written: [], deleted: ["b.txt"] });
      // The agent ends another turn before the user confirms.
      await turn(late, "s", "3", () => late.write({ "c.txt": "c3\n" }));
      const refused = await rewind({ previewed: preview });
      expect(refused.status).toBe(409);
      const body = JSON.parse(refused.body);
      expect(body.error).toEqual({
        code: "plan-changed",
        message:
          "the rewind is no longer the one previewed: it would now rewind turns 2, 3, not turn 2; nothing was changed",
      });
      expect(body.preview).toMatchObject({ rewoundTurns: ["2", "3"], deleted: ["b.txt", "c.txt"] });
      expect([late.exists("b.txt"), late.exists("c.txt")]).toEqual([true, true]);
      expect((await logIn(late, "s")).map((t: any) => t.state)).toEqual(["done", "done", "done"]);
      const bad = await rewind({ previewed: { rewoundTurns: "2" } });
      expect([bad.status, JSON.parse(bad.body).error.code]).toEqual([400, "usage"]);
      // A malformed plan is named by the field the request sent, not by the library's option.
      expect(JSON.parse(bad.body).error.message).toMatch(/^previewed must be \{rewoundTurns/);
      const badRedo = await postJson(other, "/api/redo", { session: "s", shown: { restoredTurns: "2" } });
      expect([badRedo.status, JSON.parse(badRedo.body).error.message]).toEqual([
        400,
        "shown must be {restoredTurns, written?, deleted?, overridden?, overriddenState?}: lists of strings, and strings by path",
      ]);
      // Confirming the new preview rewinds what it showed.
      const done = await rewind({ previewed: body.preview });
      expect([done.status, JSON.parse(done.body).rewoundTurns]).toEqual([200, ["2", "3"]]);
      expect([late.exists("b.txt"), late.exists("c.txt")]).toEqual([false, false]);
    } finally {
      await other.stop();
    }
  });

  it("says the workspace no longer exists when it was deleted, re-creating nothing", async () => {
    const gone = repo({ "a.txt": "a0\n" });
    await turn(gone, "s", "1", () => gone.write({ "a.txt": "a1\n" }));
    const other = await startUi(gone);
    try {
      rmSync(gone.dir, { recursive: true, force: true });
      const message = `the workspace ${gone.dir} no longer exists (deleted or moved?): nothing was changed`;
      for (const body of [{ dryRun: true }, {}]) {
        const refused = await postJson(other, "/api/rewind", { session: "s", to: "1", ...body });
        expect([refused.status, JSON.parse(refused.body)]).toEqual([
          410,
          { error: { code: "not-a-workspace", message } },
        ]);
      }
      const redo = await postJson(other, "/api/redo", { session: "s" });
      expect(JSON.parse(redo.body).error.code).toBe("not-a-workspace");
      const timeline = await rawRequest(other.port, {
        path: "/api/timeline",
        headers: { Host: `127.0.0.1:${other.port}`, "X-Ghostcommit-Token": other.token },
      });
      expect([timeline.status, JSON.parse(timeline.body).error.message]).toEqual([410, message]);
      expect(existsSync(gone.dir)).toBe(false);
    } finally {
      await other.stop();
    }
  });

  it("listens on loopback only", async () => {
    const outside = Object.values(os.networkInterfaces())
      .flat()
      .find((a) => a && a.family === "IPv4" && !a.internal);
    if (!outside) return; // no other address on this machine: nothing else could reach it
    const refused = await new Promise<boolean>((resolve) => {
      const probe = createServer();
      probe.once("error", () => resolve(false));
      // Binding the same port on the outside address succeeds only if the server does not hold it there.
      probe.listen(ui.port, outside.address, () => probe.close(() => resolve(true)));
    });
    expect(refused).toBe(true);
  });
});

describe("ghostcommit ui: starting", () => {
  it("serves without --no-open when the machine has no browser opener", async () => {
    const r = repo();
    const bin = path.join(sandbox.home, "bin-git-only");
    mkdirSync(bin, { recursive: true });
    // git alone on PATH: no xdg-open, open or start to find.
    symlinkSync(
      execFileSync("/bin/sh", ["-c", "command -v git"], { encoding: "utf8" }).trim(),
      path.join(bin, "git"),
    );
    const ui = await startUi(r, [], { PATH: bin });
    const res = await rawRequest(ui.port, {
      path: `/?token=${ui.token}`,
      headers: { Host: `127.0.0.1:${ui.port}` },
    });
    expect(res.status).toBe(200);
    expect(await ui.stop()).toBe(0);
  });

  it("gives the browser opener a private file, never the token on a command line others can read", async () => {
    const r = repo();
    const bin = path.join(sandbox.home, "bin-opener");
    mkdirSync(bin, { recursive: true });
    symlinkSync(
      execFileSync("/bin/sh", ["-c", "command -v git"], { encoding: "utf8" }).trim(),
      path.join(bin, "git"),
    );
    // An xdg-open that records its arguments (what /proc/PID/cmdline shows every user), whole
    // once the file is there: written aside, then renamed.
    const argsFile = path.join(sandbox.home, "opener-args");
    writeFileSync(
      path.join(bin, "xdg-open"),
      `#!/bin/sh\nprintf '%s\\n' "$@" > '${argsFile}.tmp' && mv '${argsFile}.tmp' '${argsFile}'\n`,
      { mode: 0o755 },
    );
    const ui = await startUi(r, [], { PATH: `${bin}:/usr/bin:/bin` });
    await expect.poll(() => existsSync(argsFile)).toBe(true);
    const opened = readFileSync(argsFile, "utf8").trim();
    expect(opened).not.toContain(ui.token);
    const file = fileURLToPath(opened);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, "utf8")).toContain(`url=${ui.url}`);
    expect(await ui.stop()).toBe(0);
    expect(existsSync(file)).toBe(false);
  });

  it("lets a rewind the page started finish before stopping on SIGTERM", async () => {
    const r = repo({ "a.txt": "a0\n" });
    await turn(r, "s", "1", () => r.write({ "a.txt": "a1\n", "b.txt": "new\n" }));
    const ui = await startUi(r);
    // The session's lock held by this (live) process: the rewind waits for it, mid-request.
    const sessions = path.join(sandbox.env.GHOSTCOMMIT_HOME!, "workspaces");
    const [store] = readdirSync(sessions).filter((key) =>
      readFileSync(path.join(sessions, key, "workspace.json"), "utf8").includes(JSON.stringify(r.dir)),
    );
    const name = createHash("sha256").update("s").digest("hex").slice(0, 32);
    const lock = path.join(sessions, store, "sessions", `${name}.ghostlock`);
    writeFileSync(
      lock,
      JSON.stringify({ pid: process.pid, host: os.hostname(), token: "held", since: Date.now() }),
    );
    const answer = postJson(ui, "/api/rewind", { session: "s", to: "1" });
    await new Promise((resolve) => setTimeout(resolve, 500));
    const exited = ui.stop();
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(ui.process.exitCode).toBeNull(); // still finishing the rewind
    rmSync(lock);
    expect(await exited).toBe(0);
    expect((await answer).status).toBe(200);
    expect([r.read("a.txt"), r.exists("b.txt")]).toEqual(["a0\n", false]);
    expect((await doctorIn(r)).ok).toBe(true);
  });

  it("fails with a clear message on a bad or busy port", async () => {
    const r = repo();
    const bad = r.cli(["ui", "--no-open", "--port", "http"]);
    expect([bad.status, bad.stderr]).toEqual([2, 'ghostcommit: --port must be a whole number, not "http"\n']);
    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, "127.0.0.1", () => resolve()));
    const port = (busy.address() as { port: number }).port;
    const taken = r.cli(["ui", "--no-open", "--port", String(port)]);
    busy.close();
    expect([taken.status, taken.stderr]).toEqual([1, `ghostcommit: port ${port} on 127.0.0.1 is in use\n`]);
  });
});

/** A POST of JSON with the server's token, as the page sends one. */
function postJson(server: { port: number; token: string }, route: string, body: object) {
  return rawRequest(server.port, {
    method: "POST",
    path: route,
    headers: {
      Host: `127.0.0.1:${server.port}`,
      "Content-Type": "application/json",
      "X-Ghostcommit-Token": server.token,
    },
    body: JSON.stringify(body),
  });
}
