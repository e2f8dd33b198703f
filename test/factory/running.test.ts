/**
 * A running `dissent factory` (docs/factory.md) on the embedded store: it keeps polling; a provider
 * that is down makes an issue fail (IssuePlanFailed), retried on a later poll with backoff, while
 * the factory keeps running; SIGTERM/SIGINT interrupt the running rounds as Ctrl-C interrupts
 * `issue plan` — labels cleared, state saved — and the process is out within 10 s; the next
 * factory resumes them at their first unfinished stage.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { STAGES } from "../../src/pipeline/stages.js";
import { factoryLines, factoryWorld, type FactoryWorld } from "../support/factory-world.js";
import { until } from "../support/proc.js";

vi.setConfig({ testTimeout: 120_000 });

let w: FactoryWorld | undefined;
afterEach(async () => {
  await w?.close();
  w = undefined;
});

const transient = (labels: readonly string[]) => labels.filter((l) => l.endsWith("-running"));

/** Polls `check` (an async read) until it holds. */
async function eventually(check: () => Promise<boolean>, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe("a running factory", () => {
  it("plans issues that arrive while it runs, polling every poll_interval_s", async () => {
    w = await factoryWorld(undefined, { extra: "factory: { poll_interval_s: 0.2 }" });
    const { child, done } = w.start(["factory", "--json"]);
    const first = await w.newIssue("Retry failed uploads");
    await eventually(async () => (await w?.show(first))?.status === "ready");
    const second = await w.newIssue("Add an audit log");
    await eventually(async () => (await w?.show(second))?.status === "ready");
    child.kill("SIGTERM");
    const r = await done;
    expect(r.code).toBe(143);
    expect(r.stderr).toBe(""); // a requested stop is the factory's normal end, not an error line (issue 19 item 12)
    expect(
      factoryLines(r.stdout)
        .filter((l) => l.event === "finished")
        .map((l) => l.issue),
    ).toEqual([first, second]);
  });

  it("a provider that is down: IssuePlanFailed with the error, retried later with backoff, the factory keeps running and plans it once the provider is back", async () => {
    let down = true;
    w = await factoryWorld(() => (down ? { status: 503 } : undefined), { extra: "factory: { poll_interval_s: 0.3, max_attempts: 20 }" });
    const id = await w.newIssue("Retry failed uploads");
    const { child, done } = w.start(["factory", "--json"]);
    const failures = async () => (await (w as FactoryWorld).events(id)).filter((e) => e.type === "IssuePlanFailed");
    await eventually(async () => (await failures()).length >= 2);
    // The provider comes back at once: on a loaded machine, checking the log between attempts must not
    // let the issue use up its attempts while the test reads.
    down = false;
    const [one, two] = await failures();
    expect(one).toMatchObject({ cycle: 1, attempt: 1, retry_at: expect.any(String) });
    expect(two).toMatchObject({ cycle: 1, attempt: 2, retry_at: expect.any(String) });
    expect(String(one?.error)).toMatch(/503|local/);
    // Backoff: the second attempt waited for the first one's retry_at, and waits longer for the next.
    expect(Date.parse(String(two?.at))).toBeGreaterThanOrEqual(Date.parse(String(one?.retry_at)));
    expect(Date.parse(String(two?.retry_at)) - Date.parse(String(two?.at))).toBeGreaterThan(Date.parse(String(one?.retry_at)) - Date.parse(String(one?.at)));
    expect(child.exitCode).toBeNull(); // still running
    // Each failed attempt took its transient label off before it was recorded.
    const log = await w.events(id);
    for (const [i, f] of log.entries()) {
      if (f.type !== "IssuePlanFailed") continue;
      const labels =
        log
          .slice(0, i)
          .filter((e) => e.type === "LabelChanged")
          .at(-1)?.labels ?? [];
      expect(transient(labels)).toEqual([]);
    }

    await eventually(async () => (await w?.show(id))?.status === "ready");
    expect(child.exitCode).toBeNull();
    child.kill("SIGTERM");
    const r = await done;
    expect(r.code).toBe(143);
    const lines = factoryLines(r.stdout);
    expect(lines.filter((l) => l.event === "failed").length).toBeGreaterThanOrEqual(2);
    expect(lines.at(-1)).toMatchObject({ event: "finished", issue: id, cycle: 1, status: "ready" });
    expect(transient((await w.show(id)).labels)).toEqual([]);
    // One cycle, every stage once.
    const completed = (await w.events(id)).filter((e) => e.type === "AdversarialStageCompleted");
    expect(completed.map((e) => `${e.stage}/${e.cycle}`)).toEqual(STAGES.map((s) => `${s.stage}/1`));
  });

  it("gives up on a round after factory.max_attempts failures of its cycle, and says so once", async () => {
    w = await factoryWorld(() => ({ status: 503 }), { extra: "factory: { poll_interval_s: 0.1, max_attempts: 2 }" });
    const id = await w.newIssue("Retry failed uploads");
    const { child, done } = w.start(["factory", "--json"]);
    await eventually(async () => (await (w as FactoryWorld).events(id)).filter((e) => e.type === "IssuePlanFailed").length >= 2);
    await new Promise((r) => setTimeout(r, 1_500)); // several more polls
    child.kill("SIGINT");
    const r = await done;
    expect(r.code).toBe(130);
    const failed = (await w.events(id)).filter((e) => e.type === "IssuePlanFailed");
    expect(failed.map((e) => [e.attempt, e.retry_at === null])).toEqual([
      [1, false],
      [2, true],
    ]);
    expect(factoryLines(r.stdout).filter((l) => l.event === "gave_up")).toEqual([expect.objectContaining({ issue: id, cycle: 1, attempts: 2 })]);
  });

  it("SIGTERM mid-stage: the running rounds are interrupted, labels cleared, state saved, out within 10 s; the next factory resumes them", async () => {
    w = await factoryWorld((model) => (model === "shape.tech_lead" ? { content: "{}", delayMs: 60_000 } : undefined), {
      extra: "factory: { poll_interval_s: 0.2 }",
    });
    const ids = [await w.newIssue("Retry failed uploads"), await w.newIssue("Add an audit log")];
    const { child, done } = w.start(["factory", "--json", "--concurrency", "2"]);
    await until(() => (w as FactoryWorld).requestsFor("shape.tech_lead") >= 2, 60_000);
    for (const id of ids) expect((await w.show(id)).labels).toContain("dissent-adv-shape-running");
    const t0 = Date.now();
    child.kill("SIGTERM");
    const r = await done;
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(r.code).toBe(143);
    expect(
      factoryLines(r.stdout)
        .filter((l) => l.event === "interrupted")
        .map((l) => l.issue)
        .sort(),
    ).toEqual([...ids].sort());
    for (const id of ids) {
      const show = await w.show(id);
      expect(transient(show.labels)).toEqual([]);
      expect(show.status).toBe("planning");
      expect(show.stages.map((s) => s.phase)).toEqual(["discover"]);
    }

    // The next start resumes both at shape: discover is not redone.
    w.answer(() => undefined);
    const again = await w.run(["factory", "--once", "--json"]);
    expect(again.code, again.stderr).toBe(0);
    for (const id of ids) {
      expect((await w.show(id)).status).toBe("ready");
      const completed = (await w.events(id)).filter((e) => e.type === "AdversarialStageCompleted");
      expect(completed.map((e) => e.stage)).toEqual(STAGES.map((s) => s.stage));
    }
    expect(w.requestsFor("discover.brief")).toBe(2);
  });
});
