import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { chromium, type BrowserContext } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { formatCi, formatValue } from "../../src/eval/html.js";
import type { GateReport, PipelineReport } from "../../src/eval/report.js";
import { byRole, configYaml, world, type World } from "../support/e2e.js";
import { challengerReply, realistic, removeDefects } from "./support.js";

const CHROMIUM = "/usr/bin/chromium";
// A scratch folder; DISSENT_SCREENSHOTS=bench refreshes the README's picture.
const SCREENSHOT = join(process.env.DISSENT_SCREENSHOTS ?? mkdtempSync(join(tmpdir(), "dissent-shots-")), "eval-report.png");

/** Pixels of a canvas that are not transparent: a chart that drew something has many. */
const inkOf = `(id) => {
  const c = document.getElementById(id);
  if (!(c instanceof HTMLCanvasElement) || c.width === 0 || c.height === 0) return 0;
  const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
  let n = 0;
  for (let i = 3; i < d.length; i += 4) if (d[i] !== 0) n++;
  return n;
}`;

describe("the --html report in headless Chromium", () => {
  let w: World;
  let browser: BrowserContext;
  let profile: string;
  let report: GateReport;
  let html: string;

  beforeAll(async () => {
    // .ci/run installs Debian's chromium; without it these tests fail, never skip.
    if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: install Debian's chromium (bash .ci/run does) or set CHROMIUM_PATH`);
    w = await world(
      byRole({
        challenger: (req) => ({ content: challengerReply(realistic, req.body), usage: { prompt_tokens: 900, completion_tokens: 120 } }),
        revision: (req) => {
          const draft = req.body.messages.find((m) => m.role === "assistant")?.content ?? "";
          return { content: removeDefects(draft, undefined) || draft, usage: { prompt_tokens: 1100, completion_tokens: 300 } };
        },
      }),
      // Priced like a small hosted model, so the report shows money.
      (url) => configYaml({ url }).replace(/(base_url: "[^"]+")/, "$1, prices: { input_per_mtok: 0.15, output_per_mtok: 0.6 }"),
    );
    const r = await w.run(["eval", "gate", "--json", "--html", "report.html"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe("dissent: wrote the report to report.html\n");
    report = JSON.parse(r.stdout) as GateReport;
    expect(report.metrics.usage.cost_usd).toBeGreaterThan(0);
    expect(report.metrics.usage.model_cost_usd).toBe(report.metrics.usage.cost_usd);
    html = join(w.dir, "report.html");
    profile = mkdtempSync(join(tmpdir(), "dissent-chromium-"));
    // A fresh profile of its own (a persistent context is how Playwright takes --user-data-dir).
    browser = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
      viewport: { width: 1280, height: 900 },
      deviceScaleFactor: 1,
    });
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await w?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
  });

  it("is one self-contained file: Chart.js inlined, nothing fetched", async () => {
    const text = readFileSync(html, "utf8");
    expect(text).toContain("Chart.js v4");
    expect(text).not.toMatch(/<script[^>]+src=|<link[^>]+href=/i);
    const page = await browser.newPage();
    const requests: string[] = [];
    page.on("request", (req) => requests.push(req.url()));
    await page.goto(pathToFileURL(html).href);
    await page.waitForSelector("body[data-ready=true]", { timeout: 10_000 });
    expect(requests).toEqual([pathToFileURL(html).href]);
    await page.close();
  });

  it("draws its charts (canvas present, not empty) and shows the numbers of the JSON", async () => {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await page.goto(pathToFileURL(html).href);
    await page.waitForSelector("body[data-ready=true]", { timeout: 10_000 });
    expect(errors).toEqual([]);

    const ids = await page.$$eval("canvas", (cs) => cs.map((c) => c.id));
    expect(ids).toEqual(["chart-categories", "chart-confusion", "chart-false-revisions", "chart-grounding", "chart-cost"]);
    for (const id of ids) {
      const ink = await page.evaluate(`(${inkOf})(${JSON.stringify(id)})`);
      expect(ink, id).toBeGreaterThan(500);
    }

    // Every metric row says what the JSON says.
    const rows = await page.$$eval("#metrics tr[data-key]", (trs) =>
      trs.map((tr) => ({
        key: tr.getAttribute("data-key") ?? "",
        value: tr.querySelector(".value")?.textContent ?? "",
        ci: tr.querySelector(".ci")?.textContent ?? "",
      })),
    );
    expect(rows.length).toBeGreaterThan(20);
    const m = report.metrics as unknown as Record<string, { value: number | null; ci: [number, number] | null }>;
    for (const row of rows) {
      const [head, cat] = row.key.split(".");
      const est = cat ? report.metrics.per_category[cat]?.[head as "recall" | "precision"] : m[row.key];
      expect(est, row.key).toBeDefined();
      expect(row.value, row.key).toBe(formatValue(est?.value));
      expect(row.ci, row.key).toBe(formatCi(est?.ci ?? null));
    }
    const usage = await page.$eval('[data-usage="cost"] td.num', (e) => e.textContent);
    expect(usage).toContain(`$${(report.metrics.usage.cost_usd ?? 0).toFixed(4)} this run`);
    const card = await page.$eval('[data-card="verdict_accuracy"] .v', (e) => e.textContent);
    expect(card).toBe(formatValue(report.metrics.verdict_accuracy.value));
    const items = await page.$$eval("#items tr[data-item]", (trs) => trs.map((t) => t.getAttribute("data-item")));
    expect(items).toEqual(report.items.map((o) => o.id));
    // The charts carry the JSON's numbers too.
    const confusion = await page.evaluate(`JSON.parse(document.getElementById("chart-specs").textContent)[1].config.data.datasets.map((d) => d.data)`);
    const c = report.metrics.verdict_confusion;
    expect(confusion).toEqual([
      [c.pass.pass, c.needs_work.pass],
      [c.pass.needs_work, c.needs_work.needs_work],
      [c.pass.failed, c.needs_work.failed],
    ]);

    mkdirSync(join(SCREENSHOT, ".."), { recursive: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: false });
    expect(existsSync(SCREENSHOT)).toBe(true);
    await page.close();
  });

  it("eval pipeline's page draws its charts too", async () => {
    const { agreeableReply, rolesConfig } = await import("../support/roles-config.js");
    const p = await world(
      (req) => ({
        content:
          req.body.model === "judge-model" ? (req.body.messages.some((m) => m.content.includes("index")) ? "YES" : "NO") : agreeableReply(req.body.model),
      }),
      (url) => rolesConfig(url).replace("routes:\n", 'routes:\n  eval.judge: { primary: "local:judge-model" }\n'),
    );
    try {
      const r = await p.run(["eval", "pipeline", "--limit", "3", "--html", "pipeline.html", "--json"]);
      expect(r.code, r.stderr).toBe(0);
      const report = JSON.parse(r.stdout) as PipelineReport;
      const page = await browser.newPage();
      await page.goto(pathToFileURL(join(p.dir, "pipeline.html")).href);
      await page.waitForSelector("body[data-ready=true]", { timeout: 10_000 });
      const ids = await page.$$eval("canvas", (cs) => cs.map((c) => c.id));
      expect(ids).toEqual(["chart-status", "chart-coverage", "chart-stages", "chart-false-blocks", "chart-cost"]);
      for (const id of ids.filter((x) => x !== "chart-false-blocks")) expect(await page.evaluate(`(${inkOf})(${JSON.stringify(id)})`), id).toBeGreaterThan(500);
      const cov = await page.$eval('#metrics tr[data-key="plan_coverage"] .value', (e) => e.textContent);
      expect(cov).toBe(formatValue(report.metrics.plan_coverage.value));
      await page.close();
    } finally {
      await p.close();
    }
  });
});
