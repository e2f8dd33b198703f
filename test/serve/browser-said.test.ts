/**
 * Issue 31 item 7 in a real browser (headless Chromium): a run's page shows its prompt, its draft
 * with the challenger's evidence marked, the concerns and the revised answer; a stage's rounds show
 * what each critic said, the verifier's verdicts and the draft diffed between rounds; a run made
 * without log_content says why its text is missing; a cached run says it was served from the cache.
 * Screenshots go to a scratch folder (DISSENT_SCREENSHOTS=bench refreshes bench/dashboard-run.png and
 * bench/dashboard-rounds.png).
 */
import { mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { launchChromium } from "./chromium.js";
import { DOSE, getJson, HOLE, LINK, SECRET, saidWorld, serve, type SaidWorld, type Serving } from "./world.js";

vi.setConfig({ testTimeout: 120_000, hookTimeout: 400_000 });

const SHOTS = process.env.DISSENT_SCREENSHOTS ?? mkdtempSync(join(tmpdir(), "dissent-shots-"));

let w: SaidWorld;
let s: Serving;
let browser: Browser;
let page: Page;
let issue = "";
const runs = { recorded: "", cached: "", quiet: "" };

async function audit(prompt: string, config?: string): Promise<string> {
  const r = await w.run(["run", "--audit", "--json", prompt], config);
  expect(r.code, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as { run: { run_id: string } }).run.run_id;
}

beforeAll(async () => {
  w = await saidWorld();
  const made = await w.run(["issue", "new", "--title", LINK.title, "--body", LINK.body, "--label", "dissent-load-bearing"]);
  expect(made.code, made.stderr).toBe(0);
  issue = made.stdout.trim();
  const plan = await w.run(["issue", "plan", issue, "--json"]);
  expect(plan.code, plan.stderr).toBe(0);
  runs.recorded = await audit(DOSE.prompt);
  runs.cached = await audit(DOSE.prompt);
  runs.quiet = await audit("What is the boiling point of water at sea level?", w.quiet);
  s = await serve(w);
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  mkdirSync(SHOTS, { recursive: true });
});

afterAll(async () => {
  await browser?.close();
  await s?.stop();
  await w?.close();
});

const text = async (selector: string) => (await page.locator(selector).first().textContent()) ?? "";
/** The stream is up (the dot says "live"): what a screenshot shows is the page as a user has it. */
type InPage = { document: { getElementById(id: string): { textContent: string | null } | null }; scrollY: number };
const live = () => page.waitForFunction(() => (globalThis as unknown as InPage).document.getElementById("live")?.textContent === "live");

describe("what was said, in Chromium", () => {
  it("a run: its prompt, its draft with the challenger's evidence marked, the concerns, and the final answer diffed from the draft", async () => {
    await page.goto(`${s.url}#/runs/${runs.recorded}`);
    await page.waitForSelector(`[data-run-page="${runs.recorded}"] [data-text="prompt"]`);
    expect(await text('[data-text="prompt"]')).toBe(DOSE.prompt);
    // The two sentences the challenger quoted are marked in the draft, in the order of its concerns.
    const marks = await page.$$eval('[data-text="draft"] mark', (ms) => ms.map((m) => [m.getAttribute("data-quote"), m.textContent]));
    expect(marks).toEqual([
      ["0", DOSE.bad1],
      ["1", DOSE.bad2],
    ]);
    const concerns = await page.$$eval("[data-run-concern]", (li) => li.map((l) => l.textContent ?? ""));
    expect(concerns).toHaveLength(2);
    expect(concerns[0]).toContain("CRITICAL");
    expect(concerns[0]).toContain(DOSE.concern1);
    expect(concerns[1]).toContain(DOSE.concern2);
    expect(await text('[data-verdict="needs_work"]')).toContain("needs work");
    // The final answer: the revision, shown as what it took out of the draft.
    const removed = await page.$$eval('[data-diff="revision"] [data-line="removed"]', (ls) => ls.map((l) => l.textContent ?? "").join("\n"));
    expect(removed).toContain(DOSE.bad1);
    const added = await page.$$eval('[data-diff="revision"] [data-line="added"]', (ls) => ls.map((l) => l.textContent ?? "").join("\n"));
    expect(added).not.toContain(DOSE.bad1);
    expect(added).toContain("Always read the label");
    await live();
    await page.screenshot({ path: join(SHOTS, "dashboard-run.png"), fullPage: true });
  });

  it("a run served from the reply cache says so in its header, with its tokens — not 0 in / 0 out · $0", async () => {
    await page.goto(`${s.url}#/runs/${runs.cached}`);
    await page.waitForSelector(`[data-run-page="${runs.cached}"] [data-from-cache]`);
    const header = await text(`[data-run-page="${runs.cached}"] > p:nth-of-type(2)`);
    expect(header).toMatch(/no network call: 3 calls served from the reply cache \(\d[\d.k]* in \/ \d[\d.k]* out when first made, free now\)/);
    expect(header).not.toContain("0 in / 0 out");
  });

  it("a run made without log_content says its text was not recorded, and how to have it", async () => {
    await page.goto(`${s.url}#/runs/${runs.quiet}`);
    await page.waitForSelector("[data-no-text]");
    expect(await text("[data-no-text]")).toContain("log_content: true");
    expect(await page.$('[data-text="prompt"]')).toBeNull();
  });

  it("a stage's rounds: each critic's findings, the verifier's verdicts, what blocked, and the draft diffed from the round before", async () => {
    await page.goto(`${s.url}#/issue/${issue}`);
    await page.waitForSelector(`[data-issue-page="${issue}"] tr[data-stage="shape_council"]`);
    await page.click('tr[data-stage="shape_council"]');
    const rounds = '[data-stage-rounds="shape_council"]';
    await page.waitForSelector(`${rounds} [data-round="2"] [data-diff]`);
    // Round 1: the tech lead's HIGH, quoted from the draft (marked there), confirmed by the verifier; it blocked.
    const one = `${rounds} [data-round="1"]`;
    expect(await text(`${one} [data-critic="shape.tech_lead"]`)).toContain(HOLE.wordings[0]);
    expect(await text(`${one} [data-verdict="confirmed"]`)).toContain("confirmed: it blocks");
    expect(await text(`${one} [data-verdict="refuted"]`)).toContain("refuted");
    expect(await text(`${one} [data-blocking]`)).toContain(HOLE.wordings[0]);
    expect((await page.$$eval(`${one} [data-text="draft-1"] mark`, (ms) => ms.map((m) => m.textContent ?? ""))).join(" ")).toMatch(/existing user/i);
    // Round 2: what the writer changed — the hole's line out, its fix in.
    const two = `${rounds} [data-round="2"]`;
    const lines = async (kind: string) =>
      (await page.$$eval(`${two} [data-diff] [data-line="${kind}"]`, (ls) => ls.map((l) => l.textContent ?? ""))).join("\n");
    expect(await lines("removed")).toContain(HOLE.line);
    expect(await lines("added")).toContain(HOLE.fix);
    expect(await text(`${two} .said-round`)).toContain("nothing blocked this draft");
    // What the stage's roles read: the context file's section about linking, not its billing section.
    await page.click('tr[data-stage="shape_council"] + tr [data-code-read] > summary');
    const read = await text('tr[data-stage="shape_council"] + tr [data-code-read]');
    expect(read).toMatch(/read by .*shape\.writer/);
    expect(read).toMatch(/read by .*shape\.tech_lead/);
    expect(read).toContain("docs/accounts.md:3-");
    expect(read).not.toContain("docs/accounts.md:7-");
    await live();
    // The stage's row and its rounds, from the page drawn whole (the sticky bar stays at the top, off the picture).
    const top = await page.locator('tr[data-stage="shape_council"]').boundingBox();
    const box = await page.locator(rounds).boundingBox();
    const scroll = await page.evaluate(() => (globalThis as unknown as InPage).scrollY);
    if (!top || !box) throw new Error("the stage's rounds are not on the page");
    const y = top.y + scroll;
    await page.screenshot({
      path: join(SHOTS, "dashboard-rounds.png"),
      fullPage: true,
      clip: { x: 0, y, width: 1440, height: box.y + scroll + box.height - y + 8 },
    });
  });

  it("costs of unknown price show an estimate, named as one and from which price, not only 'unpriced'; no secret is on any page", async () => {
    await page.goto(`${s.url}#/costs`);
    await page.waitForSelector('body[data-view="costs"] [data-unpriced]');
    const note = await text("[data-unpriced]");
    expect(note).toContain("estimate");
    expect(note).toContain("openai:gpt-4o-mini");
    expect(await text(".totals")).toMatch(/≈\$[\d.]+ est\./);
    await page.screenshot({ path: join(SHOTS, "dashboard-costs-estimated.png"), fullPage: true });
    for (const path of ["/api/stats", `/api/issues/${issue}`, `/api/runs/${runs.recorded}`]) expect((await getJson(s.url, path)).text).not.toContain(SECRET);
  });
});
