/**
 * The dashboard in a real browser (headless Chromium driven by playwright-core): the board shows
 * a planned issue in its column; its page shows the stages and a concern's lineage; a stage of a
 * plan running in another process appears without a reload. Screenshots go to bench/.
 */
import { mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startDissent } from "../support/proc.js";
import { launchChromium } from "./chromium.js";
import { filledWorld, HIGH, serve, type ServeWorld, type Serving } from "./world.js";

vi.setConfig({ testTimeout: 120_000, hookTimeout: 300_000 });

// Screenshots go to a scratch folder; DISSENT_SCREENSHOTS=bench refreshes the README's pictures.
const BENCH = process.env.DISSENT_SCREENSHOTS ?? mkdtempSync(join(tmpdir(), "dissent-shots-"));
const TOKEN = "browser-test-token-8c2e1d";

let w: ServeWorld;
let s: Serving;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  // Priced like a mid-range hosted model (USD per million tokens), so the page shows dollars.
  w = await filledWorld({ rich: true, provider: "prices: { input_per_mtok: 3, output_per_mtok: 15 }" });
  const run = await w.run(["run", "--audit", "How large may an upload be?"]);
  expect(run.code, run.stderr).toBe(0);
  s = await serve(w);
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
});

afterAll(async () => {
  await browser?.close();
  await s?.stop();
  await w?.close();
});

describe("the dashboard in Chromium", () => {
  it("shows each issue in the column of its state label", async () => {
    await page.goto(s.url);
    await page.waitForSelector('[data-column="fixed"] [data-issue="1"]');
    await page.waitForSelector('[data-column="ready"] [data-issue="2"]');
    await page.waitForSelector('[data-column="find"] [data-issue="3"]');
    expect(await page.textContent('[data-issue="2"]')).toContain("Resumable uploads");
    expect(await page.textContent('[data-column="hitl"]')).toContain("Delete accounts on request");
    expect(await page.textContent('[data-column="plan"]')).toContain("Nightly export of invoices");
  });

  it("opens an issue: its stages, its plan and a concern's lineage to the wiki and the later issue", async () => {
    await page.click('[data-column="fixed"] [data-issue="1"]');
    await page.waitForSelector('[data-issue-page="1"]');
    const stages = await page.$$eval("tr[data-stage]", (rows) => rows.map((r) => [r.getAttribute("data-stage"), r.getAttribute("data-status")]));
    expect(stages).toEqual([
      ["discovery_council", "finished"],
      ["shape_council", "finished"],
      ["plan_council", "finished"],
      ["spec_judge", "finished"],
    ]);
    const line = page.locator("[data-concern]", { hasText: HIGH.concern });
    await line.waitFor();
    expect(await line.locator('[data-step="raised"]').textContent()).toContain("spec.judge");
    expect(await line.locator('[data-step="shipped"]').textContent()).toContain("PR #42");
    expect(await line.locator('[data-step="wiki"]').textContent()).toContain("acceptance-criteria-never-mention");
    expect(await line.locator('[data-step="given-to"]').textContent()).toContain("#2");
    expect(await page.textContent('[data-artifact="plan"]')).toContain("planner");
    await page.click('tr[data-stage="spec_judge"]'); // its rounds and calls
    await page.waitForSelector('tr.rounds [data-round="1"] [data-call]');
    await page.screenshot({ path: join(BENCH, "dashboard-issue.png"), fullPage: true });
  });

  it("shows a plan running in another process live: its card moves to plan with the stage running, and its page grows a new stage — no reload", async () => {
    await page.goto(s.url);
    await page.waitForSelector('[data-column="find"] [data-issue="3"]');
    await page.evaluate("window.__sameDocument = true"); // gone if the page reloads
    w.slowDown(400);
    const plan = startDissent(["issue", "plan", "3", "--json"], { cwd: w.dir, env: { DISSENT_HOME: w.home } });
    let finished = false;
    void plan.done.then(() => (finished = true));
    await page.waitForSelector('[data-column="plan"] [data-issue="3"] .badge.running', { timeout: 30_000 });
    expect(finished).toBe(false);
    mkdirSync(BENCH, { recursive: true });
    await page.screenshot({ path: join(BENCH, "dashboard-board.png"), clip: { x: 0, y: 0, width: 1440, height: 330 } });
    await page.click('[data-issue="3"]');
    await page.waitForSelector('[data-issue-page="3"]');
    const seen = await page.$$eval("tr[data-stage]", (rows) => rows.map((r) => r.getAttribute("data-stage")));
    const next = ["discovery_council", "shape_council", "plan_council", "spec_judge"].find((st) => !seen.includes(st)) ?? "spec_judge";
    await page.waitForSelector(`tr[data-stage="${next}"]`, { timeout: 60_000 });
    expect(finished).toBe(false); // it appeared while the plan was still running
    const result = await plan.done;
    w.slowDown(0);
    expect(result.code, result.stderr).toBe(0);
    await page.waitForSelector('tr[data-stage="spec_judge"][data-status="finished"]', { timeout: 5_000 });
    expect(await page.evaluate("window.__sameDocument")).toBe(true);
    await page.click('a[href="#/"]');
    await page.waitForSelector('[data-column="ready"] [data-issue="3"]');
    expect(await page.evaluate("window.__sameDocument")).toBe(true);
  });

  it("shows where the money went (charts and tables by role, model and day), the audit runs and the wiki", async () => {
    await page.goto(`${s.url}#/costs`);
    await page.waitForSelector('body[data-view="costs"]');
    // (Functions, not strings: the page's Content-Security-Policy forbids eval, Playwright's included.)
    type InPage = { document: { querySelectorAll(s: string): { length: number } }; Chart?: unknown };
    await page.waitForFunction(() => (globalThis as unknown as InPage).document.querySelectorAll("canvas").length === 5);
    await page.waitForFunction(() => (globalThis as unknown as InPage).Chart !== undefined); // Chart.js, fetched only now
    const charts = await page.locator("canvas[data-chart]").evaluateAll((cs) => cs.map((c) => c.getAttribute("data-chart")));
    expect(charts).toEqual(["USD and calls by day (UTC)", "USD by role", "USD by model", "Network calls by role", "Tokens by role"]);
    const roles = await page.$$eval('[data-table="by role"] tbody tr', (rows) => rows.map((r) => r.textContent ?? ""));
    expect(roles.some((r) => r.startsWith("spec.judge"))).toBe(true);
    expect(roles.every((r) => /\$\d/.test(r))).toBe(true); // priced: dollars, not n/a
    await page.screenshot({ path: join(BENCH, "dashboard-costs.png"), fullPage: true });
    await page.goto(`${s.url}#/runs`);
    await page.waitForSelector("[data-run]");
    expect(await page.textContent("[data-run]")).toContain("passed");
    await page.goto(`${s.url}#/wiki`);
    await page.waitForSelector("[data-entry]");
    expect(await page.$$("[data-entry]")).toHaveLength(2);
  });

  it("asks once for the token when the server needs one, then works from it", async () => {
    const guarded = await serve(w, [], { DISSENT_SERVE_TOKEN: TOKEN });
    try {
      const context = await browser.newContext();
      const p = await context.newPage();
      const first = await p.goto(guarded.url);
      expect(first?.status()).toBe(401);
      await p.waitForSelector("#token:not([hidden])");
      await p.fill("#token-value", "wrong");
      await p.click("#token button");
      await p.waitForSelector("#token-error:not([hidden])");
      await p.fill("#token-value", TOKEN);
      await p.click("#token button");
      await p.waitForSelector('[data-column="ready"] [data-issue="2"]');
      expect(await p.evaluate('sessionStorage.getItem("dissent-token")')).toBe(TOKEN);
      await context.close();
    } finally {
      await guarded.stop();
    }
  });

  it("an address with a malformed escape (#/issue/%E0%A4%A) shows 'not found' instead of keeping the old view", async () => {
    await page.goto(`${s.url}#/issue/2`);
    await page.waitForSelector('[data-issue-page="2"]');
    await page.evaluate('location.hash = "#/issue/%E0%A4%A"');
    await page.waitForSelector("[data-not-found]");
    expect(await page.$('[data-issue-page="2"]')).toBeNull();
    expect(await page.textContent("[data-not-found]")).toContain("not found");
  });
});
