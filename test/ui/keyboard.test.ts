import type { Page } from "playwright-core";
import { beforeAll, describe, expect, it } from "vitest";
import { sessionSandbox, turn } from "../session/support.js";
import { browserPages, type RunningUi, startUi } from "./support.js";

const { repo } = sessionSandbox();
const poll = <T>(read: () => Promise<T>) => expect.poll(read, { timeout: 20_000 });

const { servers, openPage } = browserPages();

/** What has focus: a turn as "#id", a file row as "file path", else the element's tag and text. */
const focused = (page: Page) =>
  page.evaluate(() => {
    const el = document.activeElement as HTMLElement;
    if (el.classList.contains("item")) return el.querySelector(".id")?.textContent;
    if (el.dataset.file !== undefined) return `file ${el.querySelector(".path")?.textContent}`;
    return `${el.tagName} ${el.tagName === "BODY" ? "" : el.textContent}`.trim();
  });

/** Tabs (the keyboard only) until a turn of the list has focus. */
async function tabIntoList(page: Page): Promise<void> {
  for (let i = 0; i < 10 && !(await focused(page))?.startsWith("#"); i++) await page.keyboard.press("Tab");
  expect(await focused(page)).toMatch(/^#/);
}

describe("the web timeline from the keyboard alone", () => {
  const r = repo({ "a.txt": "a0\n", "b.txt": "b0\n" });
  let ui: RunningUi;

  beforeAll(async () => {
    await turn(r, "s", "1", () => r.write({ "a.txt": "a1\n" }));
    await turn(r, "s", "2", () => r.write({ "a.txt": "a2\n", "b.txt": "b2\n" }));
    await turn(r, "s", "3", () => r.write({ "b.txt": "b3\n" }));
    ui = await startUi(r);
    servers.push(ui);
  });

  it("keeps focus on its turn when a hook's turn redraws the list, which is one Tab stop", async () => {
    const page = await openPage(ui);
    await tabIntoList(page);
    expect(await focused(page)).toBe("#3");
    await page.keyboard.press("ArrowDown");
    await poll(() => focused(page)).toBe("#2");
    await page.waitForSelector("#detail .files li");

    await turn(r, "s", "4", () => r.write({ "c.txt": "c4\n" }));
    await page.waitForSelector('.item .id:text-is("#4")');
    expect(await focused(page)).toBe("#2");
    // The next Tab leaves the list for the pane: not the turns below, one by one.
    await page.keyboard.press("Tab");
    expect(await focused(page)).toBe("BUTTON Rewind to before this turn");
    await page.keyboard.press("Shift+Tab");
    expect(await focused(page)).toBe("#2");
    await page.close();
  });

  it("opens a turn with Enter into its first action, gives focus back on Cancel, and reaches the diff's files", async () => {
    const page = await openPage(ui);
    await tabIntoList(page);
    await page.keyboard.press("ArrowDown");
    await page.keyboard.press("ArrowDown");
    await poll(() => focused(page)).toBe("#2");
    await page.keyboard.press("Enter");
    await poll(() => page.locator("#detail h2").textContent()).toBe("Turn 2 · done");
    expect(await focused(page)).toBe("BUTTON Rewind to before this turn");

    await page.keyboard.press("Enter");
    await page.waitForSelector(".panel.preview");
    await page.keyboard.press("Tab");
    expect(await focused(page)).toBe("BUTTON Confirm rewind");
    await page.keyboard.press("Tab");
    expect(await focused(page)).toBe("BUTTON Cancel");
    await page.keyboard.press("Enter");
    expect(await page.locator(".panel").count()).toBe(0);
    expect(await focused(page)).toBe("BUTTON Rewind to before this turn");

    await page.waitForSelector("#detail .files li");
    await page.keyboard.press("Tab");
    expect(await focused(page)).toBe("file a.txt");
    await page.keyboard.press("Tab");
    expect(await focused(page)).toBe("file b.txt");
    await page.keyboard.press("Enter");
    expect(await page.locator(".files li.current .path").textContent()).toBe("b.txt");
    expect(await page.locator("section.file.current .path").textContent()).toBe("b.txt");
    expect([r.read("a.txt"), r.read("b.txt")]).toEqual(["a2\n", "b3\n"]);
    await page.close();
  });

  it("leaves the selection and an open preview alone on arrows pressed on a pane button; Escape cancels the preview", async () => {
    const c = repo({ "a.txt": "a0\n" });
    for (const id of ["1", "2", "3"]) await turn(c, "s", id, () => c.write({ "a.txt": `a${id}\n` }));
    const server = await startUi(c);
    servers.push(server);
    const page = await openPage(server);
    const selected = () => page.locator(".item.selected .id").textContent();
    await tabIntoList(page);
    await page.keyboard.press("ArrowDown");
    await poll(() => focused(page)).toBe("#2");
    await page.keyboard.press("Enter");
    await poll(() => focused(page)).toBe("BUTTON Rewind to before this turn");
    await page.keyboard.press("Enter");
    await page.waitForSelector(".panel.preview");
    await page.keyboard.press("Tab");
    expect(await focused(page)).toBe("BUTTON Confirm rewind");
    for (const key of ["ArrowDown", "ArrowUp", "j", "k"]) {
      await page.keyboard.press(key);
      await page.waitForTimeout(100);
      const shown = [await selected(), await page.locator(".panel.preview").count(), await focused(page)];
      expect([key, ...shown]).toEqual([key, "#2", 1, "BUTTON Confirm rewind"]);
    }

    await page.keyboard.press("Escape");
    expect(await page.locator(".panel").count()).toBe(0);
    expect(await focused(page)).toBe("BUTTON Rewind to before this turn");
    await page.keyboard.press("ArrowDown");
    expect([await selected(), await focused(page)]).toEqual(["#2", "BUTTON Rewind to before this turn"]);
    // Back on the list, the arrow keys move through it again.
    await page.keyboard.press("Shift+Tab");
    expect(await focused(page)).toBe("#2");
    await page.keyboard.press("ArrowDown");
    await poll(() => selected()).toBe("#1");
    expect(c.read("a.txt")).toBe("a3\n");
    await page.close();
  });

  it("gives focus back to the Redo button when its refusal is cancelled", async () => {
    const c = repo({ "a.txt": "a0\n" });
    await turn(c, "s", "1", () => c.write({ "a.txt": "a1\n" }));
    c.ok("rewind", "--session", "s", "--to", "1");
    c.write({ "a.txt": "edited by hand\n" });
    const server = await startUi(c);
    servers.push(server);
    const page = await openPage(server);
    await tabIntoList(page);
    await page.keyboard.press("Enter");
    await poll(() => focused(page)).toBe("BUTTON Redo turn 1");
    await page.keyboard.press("Enter");
    await page.waitForSelector(".panel.conflict");
    await page.keyboard.press("Tab");
    expect(await focused(page)).toBe("BUTTON Redo anyway");
    await page.keyboard.press("Tab");
    await page.keyboard.press("Enter");
    expect(await page.locator(".panel").count()).toBe(0);
    expect(await focused(page)).toBe("BUTTON Redo turn 1");
    // Escape is Cancel too.
    await page.keyboard.press("Enter");
    await page.waitForSelector(".panel.conflict");
    await page.keyboard.press("Escape");
    expect(await page.locator(".panel").count()).toBe(0);
    expect(await focused(page)).toBe("BUTTON Redo turn 1");
    expect(c.read("a.txt")).toBe("edited by hand\n");
    await page.close();
  });
});
