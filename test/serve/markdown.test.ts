/**
 * Artifacts on the dashboard are markdown written by models from untrusted text: in Chromium, a plan
 * that carries a script tag, event handlers, a javascript: link and a remote image renders as
 * markdown (headings, lists, code, tables) with none of them alive — raw HTML shown as text, no image
 * fetched, links only to http(s) opening with no opener. And with no model priced, the costs page
 * draws its dollars as named estimates (or, with estimates off, no dollar chart).
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { launchChromium } from "./chromium.js";
import { readText, script, serve, serveWorld, type ServeWorld, type Serving } from "./world.js";

vi.setConfig({ testTimeout: 120_000, hookTimeout: 300_000 });

let beacon: Server;
let beaconHits = 0;
let w: ServeWorld;
let s: Serving;
let browser: Browser;
let page: Page;
const dialogs: string[] = [];

const planText = (beaconUrl: string) =>
  [
    "# Plan: resumable uploads",
    "",
    "1. Store each chunk under `uploads/<id>/` and **verify** its checksum.",
    "2. Reject an oversized payload with a *413*.",
    "",
    "| step | owner |",
    "|---|---|",
    "| chunk store | api |",
    "",
    "- [x] chunk store",
    "- [ ] resume after a restart",
    "",
    "```ts",
    "const limit = 10 * 1024 * 1024;",
    "```",
    "",
    '<script>window.__pwned = "script tag"</script>',
    "",
    '<img src="x" onerror="window.__pwned = \'img onerror\'">',
    "",
    `See [the upload docs](https://example.com/docs/uploads), [run me](javascript:alert(document.domain)) and [this file](../../etc/passwd).`,
    "",
    `![progress](${beaconUrl}/beacon.png)`,
    "",
    '<a href="https://example.com/x" onclick="window.__pwned = \'onclick\'">a raw link</a>',
  ].join("\n");

beforeAll(async () => {
  beacon = createServer((_req, res) => {
    beaconHits++;
    res.end();
  });
  await new Promise<void>((resolve) => beacon.listen(0, "127.0.0.1", resolve));
  const beaconUrl = `http://127.0.0.1:${(beacon.address() as AddressInfo).port}`;
  // No `prices:` on the provider: every call is to a model of unknown price.
  w = await serveWorld({
    script: {
      ...script(),
      planner: planText(beaconUrl),
      "spec.ac_generator": JSON.stringify({
        acceptance_criteria: ["An upload over 10 MB **must** get a 413 <b onmouseover=\"window.__pwned='criterion'\">now</b>."],
      }),
    },
  });
  const id = await w.newIssue("Resumable uploads", 'Chunks of **1 MB**, resumable after a restart.\n\n<iframe src="https://example.com"></iframe>');
  await w.plan(id);
  s = await serve(w);
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.on("dialog", (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
});

afterAll(async () => {
  await browser?.close();
  await s?.stop();
  await w?.close();
  await new Promise<void>((resolve) => (beacon ? beacon.close(() => resolve()) : resolve()));
});

describe("a plan carrying scripts, handlers and a remote image, in Chromium", () => {
  it("renders as markdown: headings, lists, code, a table, task boxes that cannot be ticked", async () => {
    await page.goto(`${s.url}#/issue/1`);
    await page.waitForSelector('[data-artifact="plan"] h1');
    const plan = page.locator('[data-artifact="plan"]');
    expect(await plan.locator("h1").textContent()).toBe("Plan: resumable uploads");
    expect(await plan.locator("ol > li").count()).toBe(2);
    expect(await plan.locator("strong").first().textContent()).toBe("verify");
    expect(await plan.locator("code").first().textContent()).toBe("uploads/<id>/");
    expect(await plan.locator("pre code.language-ts").textContent()).toContain("const limit");
    expect(await plan.locator("table td").first().textContent()).toBe("chunk store");
    type Box = { checked: boolean; disabled: boolean }; // (the tests' TypeScript has no DOM types)
    const boxes = await plan
      .locator('input[type="checkbox"]')
      .evaluateAll((els) => els.map((e) => [(e as unknown as Box).checked, (e as unknown as Box).disabled]));
    expect(boxes).toEqual([
      [true, true],
      [false, true],
    ]);
    expect(await page.locator('[data-artifact="acceptance_criteria"] strong').textContent()).toBe("must");
  });

  it("nothing in it runs: no script, no handler, no image, no frame; raw HTML shows as text", async () => {
    const artifacts = page.locator("[data-artifact]");
    const found = await artifacts.evaluateAll((roots) =>
      roots.flatMap((root) =>
        [...root.querySelectorAll("*")].flatMap((el) => [
          ...(["SCRIPT", "IMG", "IFRAME", "OBJECT", "EMBED", "STYLE"].includes(el.tagName) ? [el.tagName] : []),
          ...[...el.attributes].filter((a) => /^on/i.test(a.name) || a.name === "style" || a.name === "src").map((a) => `${el.tagName}@${a.name}`),
        ]),
      ),
    );
    expect(found).toEqual([]);
    const text = (await page.locator('[data-artifact="plan"]').textContent()) ?? "";
    expect(text).toContain('<script>window.__pwned = "script tag"</script>');
    expect(text).toContain("[image: progress]");
    await page.locator('[data-artifact="acceptance_criteria"]').hover();
    await page.locator("summary", { hasText: "issue text" }).click();
    expect(await page.locator('[data-artifact="issue-body"] strong').textContent()).toBe("1 MB");
    expect(await page.locator('[data-artifact="issue-body"]').textContent()).toContain("<iframe");
    await page.locator('[data-artifact="plan"] a', { hasText: "run me" }).click();
    expect(await page.evaluate(() => (globalThis as unknown as { __pwned?: string }).__pwned)).toBeUndefined();
    expect(dialogs).toEqual([]);
    expect(beaconHits).toBe(0);
  });

  it("links: http(s) ones open a new tab with no opener and no referrer; javascript: and relative ones are inert text", async () => {
    const links = await page
      .locator('[data-artifact="plan"] a')
      .evaluateAll((as) => as.map((a) => [a.textContent, a.getAttribute("href"), a.getAttribute("target"), a.getAttribute("rel")]));
    expect(links).toEqual([
      ["the upload docs", "https://example.com/docs/uploads", "_blank", "noopener noreferrer nofollow"],
      ["run me", null, null, null],
      ["this file", null, null, null],
    ]);
  });
});

describe("the costs page when no call has a price", () => {
  const chartsOf = () => page.locator("canvas[data-chart]").evaluateAll((cs) => cs.map((c) => c.getAttribute("data-chart")));

  it("draws its dollars as estimates from the tokens, named as estimates, never as a bill", async () => {
    await page.goto(`${s.url}#/costs`);
    await page.waitForSelector('body[data-view="costs"]');
    expect(await chartsOf()).toEqual([
      "≈ USD (estimated) and calls by day (UTC)",
      "≈ USD by role (estimated)",
      "≈ USD by model (estimated)",
      "Network calls by role",
      "Tokens by role",
    ]);
    const main = (await page.textContent("main")) ?? "";
    expect(main).toContain("went to models with no known price");
    expect(main).toContain("an estimate, not what they cost");
    expect(main).not.toMatch(/\$0(?![.\d])/); // an unknown price is never $0
  });

  it("with serve.estimate_at: false, draws calls and tokens, and no dollar chart", async () => {
    const config = w.write("no-estimates.config.yaml", `${readText(join(w.dir, "dissent.config.yaml"))}\nserve: { estimate_at: false }\n`);
    const plain = await serve(w, ["--config", config]);
    try {
      await page.goto(`${plain.url}#/costs`);
      await page.waitForSelector('body[data-view="costs"]');
      expect(await chartsOf()).toEqual(["Network calls by day (UTC)", "Network calls by role", "Tokens by role"]);
      expect(await page.textContent("main")).toContain("went to models with no known price");
    } finally {
      await plain.stop();
    }
  });
});
