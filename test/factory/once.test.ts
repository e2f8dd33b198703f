/**
 * `dissent factory --once` on the embedded store (docs/factory.md): one poll, every `dissent-find`
 * issue planned as `issue plan` would, one line per issue start, finished stage and end, exit 0;
 * exit 1 when a round failed.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { STAGES } from "../../src/pipeline/stages.js";
import { factoryLines, factoryWorld, type FactoryWorld } from "../support/factory-world.js";

vi.setConfig({ testTimeout: 120_000 });

let w: FactoryWorld | undefined;
afterEach(async () => {
  await w?.close();
  w = undefined;
});

describe("dissent factory --once (SQLite)", () => {
  it("plans every dissent-find issue, leaves the others alone, prints one JSON line per start, stage and end, exits 0", async () => {
    w = await factoryWorld();
    const ids = [
      await w.newIssue("Retry failed uploads"),
      await w.newIssue("Fix the typo in the README", ["dissent-trivial"]),
      await w.newIssue("Add an audit log"),
    ];
    // One issue is not for the factory: a person took it out of the find state.
    const done = await w.newIssue("Not for dissent");
    expect((await w.run(["issue", "label", done, "--remove", "dissent-find"])).code).toBe(0);

    const r = await w.run(["factory", "--once", "--json", "--concurrency", "2"]);
    expect(r.code, r.stderr).toBe(0);
    const lines = factoryLines(r.stdout);
    for (const id of ids) {
      const mine = lines.filter((l) => l.issue === id);
      expect(mine[0]).toMatchObject({ event: "started", cycle: 1, attempt: 1 });
      expect(mine.at(-1)).toMatchObject({ event: "finished", status: "ready", calls: expect.any(Number), cost_usd: null });
      const show = await w.show(id);
      expect(show.status).toBe("ready");
      expect(show.labels).toContain("dissent-ready");
      expect(show.labels.filter((l) => l.endsWith("-running"))).toEqual([]);
      // The finished line's calls are the cycle's network calls.
      expect(mine.at(-1)?.calls).toBe(show.calls);
    }
    // Load-bearing issues print a line per finished stage; the trivial one has none.
    for (const id of [ids[0], ids[2]])
      expect(lines.filter((l) => l.issue === id && l.event === "stage").map((l) => l.phase)).toEqual(STAGES.map((s) => s.phase));
    expect(lines.filter((l) => l.issue === ids[1] && l.event === "stage")).toEqual([]);
    expect(lines.some((l) => l.issue === done)).toBe(false);
    expect((await w.show(done)).status).toBe("new");
    for (const l of lines) expect(Date.parse(l.at)).not.toBeNaN();

    // A second poll finds nothing to plan: no line, no model call, exit 0.
    const before = w.server.requests.length;
    const again = await w.run(["factory", "--once"]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toBe("");
    expect(w.server.requests.length).toBe(before);
  });

  it("text lines: who, what, and the calls and cost at the end", async () => {
    w = await factoryWorld();
    const id = await w.newIssue("Retry failed uploads");
    const r = await w.run(["factory", "--once"]);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trim().split("\n");
    expect(lines[0]).toMatch(new RegExp(`^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ  #${id} started · cycle 1 · attempt 1 · `));
    expect(lines.slice(1, 5).map((l) => l.replace(/^\S+\s+/, ""))).toEqual(
      STAGES.map((s) => expect.stringMatching(new RegExp(`^#${id} ${s.phase} converged after 1 round · \\d+ calls · cost unknown$`))),
    );
    expect(lines.at(-1)).toMatch(new RegExp(`#${id} ready · load_bearing · \\d+ calls · cost unknown$`));
  });

  it("a round that fails is recorded (IssuePlanFailed), reported, and --once exits 1; the next --once after the backoff tries again", async () => {
    w = await factoryWorld((model) => (model === "discover.brief" ? { status: 500 } : undefined), {
      extra: "factory: { poll_interval_s: 0.2, max_attempts: 2 }",
    });
    const id = await w.newIssue("Retry failed uploads");
    const first = await w.run(["factory", "--once", "--json"]);
    expect(first.code).toBe(1);
    const failed = factoryLines(first.stdout).find((l) => l.event === "failed");
    expect(failed).toMatchObject({ issue: id, cycle: 1, attempt: 1, max_attempts: 2, retry_at: expect.any(String) });
    expect(String(failed?.error)).toMatch(/discover\.brief|500|local/);
    const [event] = (await w.events(id)).filter((e) => e.type === "IssuePlanFailed");
    expect(event).toMatchObject({ type: "IssuePlanFailed", issue_id: id, cycle: 1, attempt: 1, retry_at: failed?.retry_at });
    expect((await w.show(id)).labels.filter((l) => l.endsWith("-running"))).toEqual([]);

    await new Promise((r) => setTimeout(r, 300)); // past the backoff (one poll interval)
    w.answer(() => undefined);
    const second = await w.run(["factory", "--once", "--json"]);
    expect(second.code, second.stderr).toBe(0);
    expect(factoryLines(second.stdout).at(-1)).toMatchObject({ event: "finished", issue: id, cycle: 1, status: "ready" });
    expect(factoryLines(second.stdout)[0]).toMatchObject({ event: "started", attempt: 2 });
  });

  it("a configuration error stops it before any poll: exit 2, one line", async () => {
    w = await factoryWorld();
    await w.newIssue("Retry failed uploads");
    const bad = await w.run(["factory", "--once", "--concurrency", "0"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^dissent: error: --concurrency must be a whole number from 1 to 256, not '0'\n$/);
    const env = await w.run(["factory", "--once"], { env: { DISSENT_LEASE_TTL_MS: "soon" } });
    expect(env.code).toBe(2);
    expect(env.stderr).toMatch(/DISSENT_LEASE_TTL_MS/);
    expect(w.server.requests).toHaveLength(0);
  });
});
