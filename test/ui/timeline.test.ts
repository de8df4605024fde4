import { copyFileSync, mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Repo } from "../helpers/repo.js";
import { sessionSandbox, turn } from "../session/support.js";
import { launchChromium, type RunningUi, startUi } from "./support.js";
import { logIn } from "../helpers/in-process.js";

const { sandbox, repo } = sessionSandbox();
const HOSTILE_PATH = "<img src=x onerror=window.pwned=1>.txt";
const HOSTILE_PROMPT = "<script>window.pwned=2</script><b>bold?</b> make the parser faster";

/** Waits for what the page shows; the page updates on its own (line counts, polling). */
const poll = <T>(read: () => Promise<T>) => expect.poll(read, { timeout: 20_000 });

let browser: Browser;
const servers: RunningUi[] = [];

beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  for (const ui of servers) expect(await ui.stop()).toBe(0);
  await browser?.close();
});

/** Opens the page of a running server and remembers every URL it asks for and every dialog. */
async function openPage(ui: RunningUi): Promise<{ page: Page; requests: string[]; dialogs: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1100, height: 680 } });
  const requests: string[] = [];
  const dialogs: string[] = [];
  page.on("request", (request) => requests.push(request.url()));
  page.on("dialog", (dialog) => {
    dialogs.push(dialog.message());
    dialog.dismiss();
  });
  await page.goto(ui.url);
  await page.waitForSelector("body[data-ready]");
  return { page, requests, dialogs };
}

/** Serves `repo` on a server of its own and presses "Rewind to before this turn" on one turn. */
async function rewindOnNewServer(repo: Repo, session: string, id: string): Promise<Page> {
  const ui = await startUi(repo);
  servers.push(ui);
  const { page } = await openPage(ui);
  await turnItem(page, session, id).click();
  await page.getByRole("button", { name: "Rewind to before this turn" }).click();
  return page;
}

/**
 * Waits for the panel of a rewind or redo that was carried out; should another panel stay
 * instead (a refusal shown again, a failure), the error says what it shows.
 */
async function waitDone(page: Page): Promise<void> {
  try {
    await page.waitForSelector(".panel.done");
  } catch (error) {
    const shown = await page
      .locator(".panel")
      .allTextContents()
      .catch(() => []);
    throw new Error(`${(error as Error).message}\npanels shown instead: ${JSON.stringify(shown)}`);
  }
}

const turnItem = (page: Page, session: string, id: string) =>
  page.locator(`[data-session="${session}"] .item`, {
    has: page.locator(".id", { hasText: new RegExp(`^#${id}$`) }),
  });

describe("the web timeline in a real browser", () => {
  const review = repo({ "src/parser.ts": "export const a = 1;\nexport const b = 2;\n", "logo.bin": "x" });
  let ui: RunningUi;

  beforeAll(async () => {
    await turn(
      review,
      "older-session",
      "1",
      () => review.write({ "notes.md": "first\n" }),
      "write some notes",
    );
    review.ok("snapshot", "-m", "by hand, before the refactor");
    await turn(
      review,
      "newer-session",
      "1",
      () =>
        review.write({ "src/parser.ts": "export const a = 10;\nexport const b = 2;\nexport const c = 3;\n" }),
      "tune the parser constants",
    );
    await turn(
      review,
      "newer-session",
      "2",
      async () => {
        review.write({ [HOSTILE_PATH]: "hello\n", "logo.bin": Buffer.from([0, 1, 2, 0, 255]) });
        review.write({ "new\nline.txt": "n\n", "new line.txt": "s\n" });
        review.write({ "big.txt": Array.from({ length: 2500 }, (_, i) => `line ${i}`).join("\n") });
      },
      HOSTILE_PROMPT,
    );
    ui = await startUi(review);
    servers.push(ui);
  });

  it("lists sessions newest first with their turns (prompt, age, state, files, +/−) and plain snapshots", async () => {
    const { page, requests } = await openPage(ui);
    expect(await page.locator(".session h2").allTextContents()).toEqual(["newer-session", "older-session"]);
    const newer = page.locator('[data-session="newer-session"] .item');
    expect(await newer.locator(".id").allTextContents()).toEqual(["#2", "#1"]);
    expect(await newer.nth(1).locator(".prompt").textContent()).toBe("tune the parser constants");
    await poll(() => newer.nth(1).locator(".counts").textContent()).toBe("+2 −1");
    expect(await newer.nth(1).locator(".line2").textContent()).toMatch(/s ago\s*done\s*1 file/);
    expect(await page.locator(".snapshots .prompt").allTextContents()).toEqual([
      "by hand, before the refactor",
    ]);
    // Everything the page loads comes from the server itself: no CDN, fonts or scripts elsewhere.
    const origin = `http://127.0.0.1:${ui.port}/`;
    expect(requests.filter((url) => !url.startsWith(origin) && !url.startsWith("data:"))).toEqual([]);
    await page.close();
  });

  it("keeps a prompt and a file name holding HTML as text", async () => {
    const { page, dialogs } = await openPage(ui);
    const hostile = turnItem(page, "newer-session", "2");
    expect(await hostile.locator(".prompt").textContent()).toBe(HOSTILE_PROMPT);
    await hostile.click();
    await page.waitForSelector(".files li");
    expect(await page.locator(".full-prompt").textContent()).toBe(HOSTILE_PROMPT);
    expect(await page.locator(".files .path").allTextContents()).toContain(HOSTILE_PATH);
    expect(await page.locator("section.file h3 .path").allTextContents()).toContain(HOSTILE_PATH);
    // A line break in a name is shown as the command line shows it, never folded into a space.
    const names = await page.locator(".files .path").allTextContents();
    expect(names).toContain('"new\\nline.txt"');
    expect(names).toContain("new line.txt");
    expect(
      await page.evaluate(() => [
        document.querySelectorAll("img, b, script:not([src])").length,
        (window as any).pwned,
      ]),
    ).toEqual([0, undefined]);
    expect(dialogs).toEqual([]);
    await page.close();
  });

  it("opens a turn's diff: its files, then lines marked added and removed; binary and large files named only", async () => {
    const { page } = await openPage(ui);
    await turnItem(page, "newer-session", "1").click();
    await page.waitForSelector("section.file");
    expect(await page.locator(".files .path").allTextContents()).toEqual(["src/parser.ts"]);
    expect(await page.locator("table.unified tr.del td:last-child").allTextContents()).toEqual([
      "export const a = 1;",
    ]);
    expect(await page.locator("table.unified tr.add td:last-child").allTextContents()).toEqual([
      "export const a = 10;",
      "export const c = 3;",
    ]);
    await page.selectOption("#view", "split");
    await page.waitForSelector("table.split");
    expect(await page.locator("table.split td.del").allTextContents()).toEqual(["export const a = 1;"]);
    expect(await page.locator("table.split td.add").allTextContents()).toEqual([
      "export const a = 10;",
      "export const c = 3;",
    ]);
    await page.selectOption("#view", "unified");

    await turnItem(page, "newer-session", "2").click();
    await page.waitForSelector("text=Binary file, not shown.");
    const block = (name: string) =>
      page.locator("section.file", { has: page.locator("h3 .path", { hasText: name }) });
    expect(await block("logo.bin").locator("p").textContent()).toBe("Binary file, not shown.");
    expect(await block("big.txt").locator("p").textContent()).toBe("Large diff (+2500 −0 lines), not shown.");
    expect(await block("big.txt").locator("tr").count()).toBe(0);
    await page.close();
  });

  it("moves between turns with j/k and between files with n/p; a snapshot opens its diff too", async () => {
    const { page } = await openPage(ui);
    await page.keyboard.press("j");
    await page.waitForSelector(".files li");
    expect(await page.locator(".item.selected .id").textContent()).toBe("#2");
    await page.keyboard.press("j");
    await poll(() => page.locator(".item.selected .id").textContent()).toBe("#1");
    await page.keyboard.press("k");
    await poll(() => page.locator(".item.selected .id").textContent()).toBe("#2");
    await page.waitForSelector(".files li");
    await page.keyboard.press("n");
    await page.keyboard.press("n");
    expect(await page.locator(".files li.current .path").textContent()).toBe(
      (await page.locator(".files .path").allTextContents())[1],
    );
    await page.locator(".snapshots .item").click();
    await page.waitForSelector("text=the files now, against this snapshot");
    await page.waitForSelector(".files li");
    expect(await page.locator(".files .path").allTextContents()).toContain("src/parser.ts");
    await page.close();
  });

  it("shows a turn a hook adds while the page is open, and takes the README's screenshot", async () => {
    const { page } = await openPage(ui);
    await turn(
      review,
      "newer-session",
      "3",
      () => review.write({ "src/parser.ts": "export const a = 10;\n" }),
      "drop b and c again",
    );
    await page.waitForSelector("text=drop b and c again");
    await turnItem(page, "newer-session", "1").click();
    await page.waitForSelector("section.file");
    await poll(() => turnItem(page, "newer-session", "3").locator(".counts").textContent()).toBe("+0 −2");
    const shot = path.join(sandbox.home, "timeline.png");
    await page.screenshot({ path: shot });
    expect(readFileSync(shot).subarray(1, 4).toString()).toBe("PNG");
    // UPDATE_SCREENSHOT=1 refreshes the picture the README shows.
    if (process.env.UPDATE_SCREENSHOT === "1") {
      mkdirSync(path.resolve("docs"), { recursive: true });
      copyFileSync(shot, path.resolve("docs/timeline.png"));
    }
    await page.close();
  });
});

describe("a turn whose snapshot is gone", () => {
  it("leaves only that turn's line counts blank", async () => {
    const gone = repo({ "a.txt": "a0\n" });
    await turn(gone, "s", "1", () => gone.write({ "a.txt": "a1\n" }));
    await turn(gone, "s", "2", () => gone.write({ "b.txt": "b1\nb2\n" }));
    gone.ok("drop", (await logIn(gone, "s"))[0].after);
    const ui = await startUi(gone);
    servers.push(ui);
    const { page } = await openPage(ui);
    await poll(() => turnItem(page, "s", "2").locator(".counts").textContent()).toBe("+2 −0");
    expect(await turnItem(page, "s", "1").locator(".counts").textContent()).toBe("");
    await page.close();
  });
});

describe("rewind and redo from the page", () => {
  const work = repo({ "a.txt": "a0\n", "b.txt": "b0\n" });
  let ui: RunningUi;

  beforeAll(async () => {
    await turn(work, "s", "1", () => work.write({ "a.txt": "a1\n" }));
    await turn(work, "s", "2", () => work.write({ "b.txt": "b2\n", "c.txt": "c2\n" }));
    ui = await startUi(work);
    servers.push(ui);
  });

  const disk = () => [work.read("a.txt"), work.read("b.txt"), work.exists("c.txt")];

  async function previewRewindOfTurn2(page: Page): Promise<void> {
    await turnItem(page, "s", "2").click();
    await page.getByRole("button", { name: "Rewind to before this turn" }).click();
    await page.waitForSelector(".panel.preview");
  }

  it("previews what a rewind writes and deletes, changes files only on Confirm rewind, and Redo brings them back", async () => {
    const { page } = await openPage(ui);
    await previewRewindOfTurn2(page);
    const preview = page.locator(".panel.preview");
    expect(await preview.locator("p").allTextContents()).toEqual([
      "Will write 1 file:",
      "Will delete 1 file:",
    ]);
    expect(await preview.locator("ul.written li").allTextContents()).toEqual(["b.txt"]);
    expect(await preview.locator("ul.deleted li").allTextContents()).toEqual(["c.txt"]);
    expect(disk()).toEqual(["a1\n", "b2\n", true]);

    await page.getByRole("button", { name: "Confirm rewind" }).click();
    await waitDone(page);
    expect(disk()).toEqual(["a1\n", "b0\n", false]);
    await page.waitForSelector('[data-session="s"] .item.rewound');
    expect(await turnItem(page, "s", "2").locator(".state").textContent()).toBe("rewound");

    await page.locator('[data-session="s"] header').getByRole("button", { name: "Redo" }).click();
    await poll(() => turnItem(page, "s", "2").locator(".state").textContent()).toBe("done");
    expect(disk()).toEqual(["a1\n", "b2\n", true]);
    // The pane says what the redo did, no longer that the turn is rewound.
    expect(await page.locator(".plan > .panel.done").textContent()).toBe(
      "Redid turn 2: wrote 2 files, deleted 0.",
    );
    expect(await page.locator('[data-session="s"] header button').count()).toBe(0);
    await page.close();
  });

  it("shows a turn whose snapshot was dropped while it runs as gone, with no line counts and no Rewind", async () => {
    const dropped = repo({ "a.txt": "a0\n" });
    await turn(dropped, "g", "1", () => dropped.write({ "a.txt": "a1\nmore\n" }));
    await turn(dropped, "g", "2", () => dropped.write({ "b.txt": "b\n" }));
    const ui = await startUi(dropped);
    servers.push(ui);
    const { page } = await openPage(ui);
    await poll(() => turnItem(page, "g", "1").locator(".counts").textContent()).toBe("+2 −1");
    const [first] = await logIn(dropped, "g");
    dropped.ok("drop", first.after);
    await page.reload();
    await page.waitForSelector("body[data-ready]");
    await poll(() => turnItem(page, "g", "1").locator(".state").textContent()).toBe("gone");
    await turnItem(page, "g", "1").click();
    await poll(() => page.locator("#detail h2").textContent()).toBe("Turn 1 · gone");
    expect(await page.getByRole("button", { name: "Rewind to before this turn" }).count()).toBe(0);
    await poll(() => turnItem(page, "g", "2").locator(".counts").textContent()).toBe("+1 −0");
    expect(await turnItem(page, "g", "1").locator(".counts").textContent()).toBe("");
    await page.close();
  });

  it("shows a rewind's outcome when the timeline is polled between the change and its answer", async () => {
    const slow = repo({ "a.txt": "a0\n" });
    await turn(slow, "q", "1", () => slow.write({ "a.txt": "a1\n" }));
    const page = await rewindOnNewServer(slow, "q", "1");
    await page.waitForSelector(".panel.preview");
    // The rewind is carried out at once, its answer held past the page's next poll (every 2 s),
    // whose timeline already shows the turn rewound (as on a busy machine).
    await page.route("**/api/rewind", async (route) => {
      if (route.request().postDataJSON()?.dryRun) return route.continue();
      const response = await route.fetch();
      await new Promise((resolve) => setTimeout(resolve, 2500));
      await route.fulfill({ response });
    });
    await page.getByRole("button", { name: "Confirm rewind" }).click();
    await waitDone(page);
    expect(await page.locator(".panel.done").textContent()).toMatch(/^Rewound turn 1: wrote 1 file/);
    expect(slow.read("a.txt")).toBe("a0\n");
    await page.close();
  });

  it("shows a conflict with its paths and what forcing would do, and changes nothing until Rewind anyway", async () => {
    work.write({ "b.txt": "a person's edit\n" });
    const { page } = await openPage(ui);
    await turnItem(page, "s", "2").click();
    await page.getByRole("button", { name: "Rewind to before this turn" }).click();
    const refusal = page.locator('.panel.conflict[data-code="conflict"]');
    await refusal.waitFor();
    expect(await refusal.locator("ul.conflicts li").allTextContents()).toEqual(["b.txt"]);
    expect(await refusal.locator("ul.uncertain").count()).toBe(0);
    // The page's own button is the way past it, not the command line's flag.
    expect(await refusal.textContent()).not.toMatch(/--force/);
    expect(await refusal.locator("ul.written li").allTextContents()).toEqual(["b.txt"]);
    expect(await refusal.locator("ul.deleted li").allTextContents()).toEqual(["c.txt"]);
    expect(disk()).toEqual(["a1\n", "a person's edit\n", true]);

    await page.getByRole("button", { name: "Rewind anyway" }).click();
    await waitDone(page);
    expect(disk()).toEqual(["a1\n", "b0\n", false]);
    await page.close();
  });

  it("rewinds anyway only over the conflicts it showed: a file edited after the preview brings the new preview", async () => {
    const edited = repo({ "a.txt": "a0\n" });
    await turn(edited, "e", "1", () => edited.write({ "a.txt": "a1\n", "new.txt": "n\n" }));
    edited.write({ "a.txt": "a1\na person's edit\n" });
    const page = await rewindOnNewServer(edited, "e", "1");
    const refusal = page.locator('.panel.conflict[data-code="conflict"]');
    await refusal.waitFor();
    expect(await refusal.locator("ul.conflicts li").allTextContents()).toEqual(["a.txt"]);
    expect(await refusal.locator("ul.deleted li").allTextContents()).toEqual(["new.txt"]);
    // The person types into the file the page says will be deleted, then presses the button.
    edited.write({ "new.txt": "n\ntyped after the preview\n" });

    await page.getByRole("button", { name: "Rewind anyway" }).click();
    await page.waitForSelector(".panel.conflict .notice");
    expect(await refusal.locator(".notice").textContent()).toMatch(/^Not rewound: the rewind is no longer/);
    expect(await refusal.locator("ul.conflicts li").allTextContents()).toEqual(["a.txt", "new.txt"]);
    expect([edited.read("a.txt"), edited.read("new.txt")]).toEqual([
      "a1\na person's edit\n",
      "n\ntyped after the preview\n",
    ]);

    await page.getByRole("button", { name: "Rewind anyway" }).click();
    await waitDone(page);
    expect([edited.read("a.txt"), edited.exists("new.txt")]).toEqual(["a0\n", false]);
    await page.close();
  });

  it("redoes anyway only over the conflicts it showed: a file edited after the refusal brings the refusal afresh", async () => {
    const r = repo({ "a.txt": "a0\n", "b.txt": "b0\n" });
    await turn(r, "s", "1", () => r.write({ "a.txt": "a1\n", "b.txt": "b1\n" }));
    r.ok("rewind", "--session", "s", "--to", "1");
    r.write({ "a.txt": "a person's edit\n" });
    const server = await startUi(r);
    servers.push(server);
    const { page } = await openPage(server);
    await page.locator('[data-session="s"] header').getByRole("button", { name: "Redo" }).click();
    const refusal = page.locator('.panel.conflict[data-code="conflict"]');
    await refusal.waitFor();
    expect(await refusal.locator("ul.conflicts li").allTextContents()).toEqual(["a.txt"]);
    expect(await refusal.locator("p").allTextContents()).toContain("Redoing anyway would write 2 files:");
    expect(await refusal.locator("ul.written li").allTextContents()).toEqual(["a.txt", "b.txt"]);
    // The person reads the refusal (a.txt only), edits b.txt, then presses the button.
    r.write({ "b.txt": "typed after the refusal\n" });

    await page.getByRole("button", { name: "Redo anyway" }).click();
    await page.waitForSelector(".panel.conflict .notice");
    expect(await refusal.locator(".notice").textContent()).toMatch(
      /^Not redone: the redo is no longer the one shown: it would now overwrite changes made since the rewind to a\.txt, b\.txt/,
    );
    expect(await refusal.locator("ul.conflicts li").allTextContents()).toEqual(["a.txt", "b.txt"]);
    expect([r.read("a.txt"), r.read("b.txt")]).toEqual(["a person's edit\n", "typed after the refusal\n"]);

    await page.getByRole("button", { name: "Redo anyway" }).click();
    await poll(() => turnItem(page, "s", "1").locator(".state").textContent()).toBe("done");
    expect([r.read("a.txt"), r.read("b.txt")]).toEqual(["a1\n", "b1\n"]);
    await page.close();
  });

  it("shows the turn's pane afresh after Confirm rewind and when its open turn ends", async () => {
    const r = repo({ "a.txt": "a0\n" });
    await turn(r, "p", "1", () => r.write({ "a.txt": "a1\n" }));
    r.ok("turn", "begin", "--session", "p", "--turn", "2", "--prompt", "prompt 2");
    r.write({ "b.txt": "b2\n" });
    const page = await rewindOnNewServer(r, "p", "1");
    const detail = page.locator("#detail");
    await page.waitForSelector('.panel.conflict[data-code="open-turn"]');
    expect(await detail.locator(".panel.conflict p.open-turn").textContent()).toBe(
      "Rewinding anyway would end turn 2, which may still be running, and rewind turns 1, 2.",
    );
    // The hook's stop arrives while the pane shows the open-turn refusal.
    await turnItem(page, "p", "2").click();
    await poll(() => detail.locator("h2").textContent()).toBe("Turn 2 · open");
    await page.getByRole("button", { name: "Rewind to before this turn" }).click();
    await page.waitForSelector('.panel.conflict[data-code="open-turn"]');
    r.ok("turn", "end", "--session", "p", "--turn", "2");
    await poll(() => detail.locator("h2").textContent()).toBe("Turn 2 · done");
    expect(await detail.locator(".panel.conflict").count()).toBe(0);
    expect(await detail.locator("p.muted").first().textContent()).not.toMatch(/still open/);

    await page.getByRole("button", { name: "Rewind to before this turn" }).click();
    await page.getByRole("button", { name: "Confirm rewind" }).click();
    await poll(() => detail.locator("h2").textContent()).toBe("Turn 2 · rewound");
    expect(await detail.locator(".panel.done").textContent()).toMatch(/^Rewound turn 2: /);
    expect(await detail.locator("button.rewind").count()).toBe(0);
    expect(await detail.locator("button.redo").textContent()).toBe("Redo turn 2");
    expect(r.exists("b.txt")).toBe(false);
    await page.close();
  });

  it("shows the new preview instead of rewinding a turn that ended after the preview", async () => {
    const late = repo({ "a.txt": "a0\n" });
    await turn(late, "t", "1", () => late.write({ "a.txt": "a1\n" }));
    await turn(late, "t", "2", () => late.write({ "b.txt": "b2\n" }));
    const page = await rewindOnNewServer(late, "t", "2");
    const preview = page.locator(".panel.preview");
    await preview.waitFor();
    expect(await preview.locator("strong").textContent()).toBe("Rewind turn 2");
    await turn(late, "t", "3", () => late.write({ "c.txt": "c3\n" }));

    await page.getByRole("button", { name: "Confirm rewind" }).click();
    await page.waitForSelector(".panel.preview .notice");
    expect(await preview.locator(".notice").textContent()).toMatch(/^Not rewound: the rewind is no longer/);
    expect(await preview.locator("strong").textContent()).toBe("Rewind turns 2, 3");
    expect(await preview.locator("ul.deleted li").allTextContents()).toEqual(["b.txt", "c.txt"]);
    expect([late.exists("b.txt"), late.exists("c.txt")]).toEqual([true, true]);

    await page.getByRole("button", { name: "Confirm rewind" }).click();
    await waitDone(page);
    expect([late.exists("b.txt"), late.exists("c.txt")]).toEqual([false, false]);
    await page.close();
  });
});

describe("a page whose server has stopped", () => {
  it("says the server is not reachable instead of waiting forever, and what that means for an action, in its status bar too", async () => {
    const r = repo({ "a.txt": "a0\n" });
    await turn(r, "s", "1", () => r.write({ "a.txt": "a1\n" }));
    await turn(r, "s", "2", () => r.write({ "b.txt": "b2\n" }));
    const ui = await startUi(r);
    const { page } = await openPage(ui);
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    await turnItem(page, "s", "2").click();
    await page.getByRole("button", { name: "Rewind to before this turn" }).click();
    await page.waitForSelector(".panel.preview");
    expect(await ui.stop()).toBe(0);
    // The timeline's polling says so, and throws nothing; a read changed nothing.
    const status = page.locator("#status");
    await poll(() => status.textContent()).toBe(
      "the ghostcommit ui server is not reachable (stopped?): nothing was changed by this page",
    );

    // An action whose answer never came: its outcome is unknown to the page, and everything it
    // says from then on, the status bar's polling included, says so.
    const unknown =
      "the ghostcommit ui server is not reachable (stopped?): whether the rewind happened is unknown; ghostcommit log shows it";
    await page.getByRole("button", { name: "Confirm rewind" }).click();
    await poll(() => page.locator(".plan").textContent()).toBe(unknown);
    await poll(() => status.textContent()).toBe(unknown);
    await page.waitForTimeout(2500);
    expect(await status.textContent()).toBe(unknown);
    await turnItem(page, "s", "1").click();
    await poll(() => page.locator(".diff-pane").textContent()).toBe(unknown);
    await page.getByRole("button", { name: "Rewind to before this turn" }).click();
    await poll(() => page.locator(".plan").textContent()).toBe(unknown);
    await page.waitForTimeout(2500);
    expect(await status.textContent()).toBe(unknown);
    expect(errors).toEqual([]);
    expect([r.read("a.txt"), r.read("b.txt")]).toEqual(["a1\n", "b2\n"]);
    await page.close();
  });
});

describe("a page left open while the command line redoes and rewinds", () => {
  /**
   * Opens the page in a tab the browser reports hidden (in the background), so it does not poll;
   * its timers stand still too, so nothing but the page's own reactions can refresh it.
   */
  async function openStalePage(r: Repo): Promise<Page> {
    const ui = await startUi(r);
    servers.push(ui);
    const page = await browser.newPage({ viewport: { width: 1100, height: 680 } });
    await page.clock.install();
    await page.addInitScript(() => {
      Object.defineProperty(document, "hidden", { get: () => (window as any).hiddenTab !== false });
    });
    await page.goto(ui.url);
    await page.waitForSelector("body[data-ready]");
    await page.clock.pauseAt(Date.now() + 10_000);
    return page;
  }
  const states = async (r: Repo) => (await logIn(r, "s")).map((t: any) => t.state);

  it("redoes only the rewind it shows: another one made since is refused and the session shown afresh", async () => {
    const r = repo({ "a.txt": "a0\n" });
    for (const id of ["1", "2", "3"]) await turn(r, "s", id, () => r.write({ [`f${id}.txt`]: `${id}\n` }));
    r.ok("rewind", "--session", "s", "--to", "3");
    const page = await openStalePage(r);
    const redo = page.locator('[data-session="s"] header').getByRole("button", { name: "Redo" });
    expect(await redo.getAttribute("title")).toBe("brings back turn 3");
    r.ok("redo", "--session", "s");
    r.ok("rewind", "--session", "s", "--to", "2");

    await redo.click();
    await poll(() => page.locator("#status").textContent()).toMatch(
      /^Not redone: the redo is no longer the one shown: it would now bring back turns 2, 3, not turn 3; nothing was changed/,
    );
    expect(await states(r)).toEqual(["done", "rewound", "rewound"]);
    expect([r.exists("f2.txt"), r.exists("f3.txt")]).toEqual([false, false]);
    await poll(() => turnItem(page, "s", "2").locator(".state").textContent()).toBe("rewound");
    expect(await redo.getAttribute("title")).toBe("brings back turns 2, 3");

    await redo.click();
    await poll(() => turnItem(page, "s", "2").locator(".state").textContent()).toBe("done");
    expect([r.exists("f2.txt"), r.exists("f3.txt")]).toEqual([true, true]);
    await page.close();
  });

  it("offers Redo in a rewound turn's pane only when the next redo brings that turn back, and names the turns", async () => {
    const r = repo({ "a.txt": "a0\n", "b.txt": "b0\n" });
    await turn(r, "s", "1", () => r.write({ "a.txt": "a1\n" }));
    await turn(r, "s", "2", () => r.write({ "a.txt": "a2\n" }));
    await turn(r, "s", "3", () => r.write({ "b.txt": "b3\n" }));
    // Stacked rewinds: the next redo brings back turn 2, the one after it turn 3.
    r.ok("rewind", "--session", "s", "--to", "3");
    r.ok("rewind", "--session", "s", "--to", "2");
    const server = await startUi(r);
    servers.push(server);
    const { page } = await openPage(server);
    await turnItem(page, "s", "3").click();
    await poll(() => page.locator("#detail h2").textContent()).toBe("Turn 3 · rewound");
    expect(await page.locator("#detail button.redo").count()).toBe(0);
    expect(await page.locator("#detail .redo-first").textContent()).toBe(
      "Redo brings back turn 2 first (the session's last rewind); this turn comes back with a later redo.",
    );
    expect(await page.locator('[data-session="s"] header button.redo').textContent()).toBe("Redo turn 2");

    await turnItem(page, "s", "2").click();
    await poll(() => page.locator("#detail h2").textContent()).toBe("Turn 2 · rewound");
    await page.locator("#detail").getByRole("button", { name: "Redo turn 2" }).click();
    await poll(() => turnItem(page, "s", "2").locator(".state").textContent()).toBe("done");
    expect([r.read("a.txt"), r.read("b.txt"), await states(r)]).toEqual([
      "a2\n",
      "b0\n",
      ["done", "done", "rewound"],
    ]);

    await turnItem(page, "s", "3").click();
    await page.locator("#detail").getByRole("button", { name: "Redo turn 3" }).click();
    await poll(() => turnItem(page, "s", "3").locator(".state").textContent()).toBe("done");
    expect([r.read("a.txt"), r.read("b.txt")]).toEqual(["a2\n", "b3\n"]);
    await page.close();
  });

  it("offers Redo after a rewind of chosen paths, whose turns stay done", async () => {
    const r = repo({ "a.txt": "a0\n", "b.txt": "b0\n" });
    await turn(r, "s", "1", () => r.write({ "a.txt": "a1\n", "b.txt": "b1\n" }));
    r.ok("rewind", "--session", "s", "--to", "1", "a.txt");
    expect([r.read("a.txt"), r.read("b.txt"), await states(r)]).toEqual(["a0\n", "b1\n", ["done"]]);
    const page = await openStalePage(r);
    const redo = page.locator('[data-session="s"] header').getByRole("button", { name: "Redo" });
    expect(await redo.getAttribute("title")).toBe("brings back a.txt of turn 1");
    await redo.click();
    await expect.poll(() => r.read("a.txt")).toBe("a1\n");
    await poll(() => page.locator('[data-session="s"] header button').count()).toBe(0);
    await page.close();
  });

  it("shows the session afresh when its tab is visible again", async () => {
    const r = repo({ "a.txt": "a0\n" });
    await turn(r, "s", "1", () => r.write({ "f1.txt": "1\n" }));
    const page = await openStalePage(r);
    await turnItem(page, "s", "1").waitFor();
    r.ok("rewind", "--session", "s", "--to", "1");
    await page.evaluate(() => {
      (window as any).hiddenTab = false;
      document.dispatchEvent(new Event("visibilitychange"));
    });
    await poll(() => turnItem(page, "s", "1").locator(".state").textContent()).toBe("rewound");
    await page.close();
  });
});
