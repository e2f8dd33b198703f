/**
 * The implement phase on the dashboard (docs/implement.md#events-dashboard-and-traces), in headless
 * Chromium: an issue whose agent is at work sits in the board's **implementing** column, one whose
 * review went out in **in review**; the reviewed issue's page shows its branch, each attempt and the
 * review stage in its timeline.
 */
import { existsSync, readFileSync } from "node:fs";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { implementWorld, type ImplementWorld } from "../support/implement-world.js";
import { startDissent, until } from "../support/proc.js";
import { launchChromium } from "./chromium.js";
import { getJson, serve, type Serving } from "./world.js";

vi.setConfig({ testTimeout: 120_000, hookTimeout: 300_000 });

let w: ImplementWorld;
let s: Serving;
let browser: Browser;
let page: Page;
let hanging: ReturnType<typeof startDissent> | undefined;
let reviewed = "";
let working = "";

beforeAll(async () => {
  w = await implementWorld({ mode: "bug-then-fix", attemptTimeoutMs: 600_000 });
  reviewed = await w.readyIssue();
  working = await w.readyIssue();
  const done = await w.run(["issue", "implement", reviewed, "--json"]);
  expect(done.code, done.stderr).toBe(0);
  // The second issue's agent hangs: its issue is dissent-implementing while the test looks.
  hanging = startDissent(["issue", "implement", working], { cwd: w.dir, env: { DISSENT_HOME: w.home, AGENT_MODE: "hang", AGENT_LOG: w.agentLog } });
  await until(() => existsSync(w.agentLog) && readFileSync(w.agentLog, "utf8").includes("mode hang"), 60_000);
  s = await serve(w);
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
});

afterAll(async () => {
  if (hanging && hanging.child.exitCode === null) hanging.child.kill("SIGTERM");
  await hanging?.done;
  await browser?.close();
  await s?.stop();
  await w?.close();
});

describe("the implement phase on the dashboard", () => {
  it("the board has an implementing column holding the issue whose agent runs, and an in review column holding the reviewed one", async () => {
    await page.goto(s.url);
    await page.waitForSelector(`[data-column="implementing"] [data-issue="${working}"]`);
    await page.waitForSelector(`[data-column="in review"] [data-issue="${reviewed}"]`);
    const { body } = await getJson<{ issues: { id: string; state: string }[] }>(s.url, "/api/issues");
    expect(body.issues.find((i) => i.id === working)?.state).toBe("dissent-implementing");
    expect(body.issues.find((i) => i.id === reviewed)?.state).toBe("dissent-review");
  });

  it("the reviewed issue's page shows its branch, each attempt with its tests, and the review stage in the timeline", async () => {
    await page.click(`[data-column="in review"] [data-issue="${reviewed}"]`);
    await page.waitForSelector(`[data-implementation="dissent/issue-${reviewed}"]`);
    const attempts = await page.$$eval(`[data-implementation] tr[data-attempt]`, (rows) =>
      rows.map((r) => [r.getAttribute("data-attempt"), r.querySelector("td:last-child")?.textContent ?? ""]),
    );
    expect(attempts).toEqual([
      ["1", "failed (1)"],
      ["2", "passed"],
    ]);
    expect(await page.textContent(`[data-implementation]`)).toContain("review recorded in the store");
    const stages = await page.$$eval("tr[data-stage]", (rows) => rows.map((r) => r.getAttribute("data-stage")));
    expect(stages).toContain("implementation_review");
  });
});
