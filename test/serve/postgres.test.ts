/**
 * `dissent serve` on a PostgreSQL store (docs/factory.md, §8): the same API, and the live stream fed by
 * LISTEN/NOTIFY — an event committed by a separate `dissent issue plan` arrives within 1 s, and a
 * reconnect with Last-Event-ID misses nothing.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { IssuePage, IssueSummary, ServedEvent, StageRoundsPage } from "../../src/read-models.js";
import { startDissent, until } from "../support/proc.js";
import { freshDatabase } from "../support/postgres.js";
import { openStream } from "./sse-client.js";
import { CRIT, getJson, ISSUES, serve, serveWorld, type ServeWorld, type Serving } from "./world.js";

vi.setConfig({ testTimeout: 180_000, hookTimeout: 180_000 });

let w: ServeWorld;
let s: Serving;
let env: Record<string, string>;

beforeAll(async () => {
  env = { DISSENT_DATABASE_URL: await freshDatabase() };
  w = await serveWorld({ extraConfig: "store: { type: postgres }", env });
  await w.plan(await w.newIssue(ISSUES.shipped.title, ISSUES.shipped.body));
  s = await serve(w, [], env);
});

afterAll(async () => {
  await s?.stop();
  await w?.close();
});

describe("serve on PostgreSQL", () => {
  it("answers the board and an issue page from the database", async () => {
    const board = await getJson<{ issues: IssueSummary[] }>(s.url, "/api/issues");
    expect(board.body.issues).toEqual([expect.objectContaining({ id: "1", state: "dissent-ready", status: "ready" })]);
    const page = await getJson<IssuePage>(s.url, "/api/issues/1");
    expect(page.body.cycles[0]?.stages.map((x) => x.status)).toEqual(["finished", "finished", "finished", "finished"]);
    expect(page.body.lineage.length).toBeGreaterThan(0);
  });

  it("serves a stage's rounds as the database kept them with the stage: each draft, what each critic said, what blocked", async () => {
    const { body } = await getJson<StageRoundsPage>(s.url, "/api/issues/1/stages/1/discovery_council");
    expect(body.absent).toBeUndefined();
    expect(body.rounds.map((r) => r.round)).toEqual([1, 2]); // the CRITICAL blocked both rounds: oscillation
    expect(body.rounds[0]?.draft).toContain("A plain, stable draft from discover.brief.");
    const sharpener = body.rounds[0]?.critics.find((c) => c.role === "discovery.problem_sharpener");
    expect(sharpener?.findings.map((f) => [f.severity, f.concern])).toEqual([["CRITICAL", CRIT.concern]]);
    expect(body.rounds.map((r) => r.blocking.map((b) => b.severity))).toEqual([["CRITICAL"], ["CRITICAL"]]);
  });

  it("streams another process's events within 1 s, and resumes after Last-Event-ID with nothing missed", async () => {
    const id = await w.newIssue(ISSUES.waiting.title, ISSUES.waiting.body);
    const start = (await getJson<{ last_seq: number }>(s.url, "/api/events?limit=1")).body.last_seq;
    w.slowDown(40);
    const first = openStream(new URL(`/api/events/stream?after=${start}`, s.url).href);
    expect(await first.opened).toBe(200);
    const plan = startDissent(["issue", "plan", id, "--json"], { cwd: w.dir, env: { DISSENT_HOME: w.home, ...env } });
    await until(() => first.events.length >= 8, 60_000);
    first.close();
    await first.ended;
    const last = first.events.at(-1)?.id ?? start;
    await new Promise((r) => setTimeout(r, 500));
    const second = openStream(new URL("/api/events/stream", s.url).href, { "last-event-id": String(last) });
    expect(await second.opened).toBe(200);
    const result = await plan.done;
    w.slowDown(0);
    expect(result.code, result.stderr).toBe(0);
    const all = (await getJson<{ events: ServedEvent[] }>(s.url, `/api/events?after=${start}&limit=1000`)).body.events;
    await until(() => (second.events.at(-1)?.id ?? 0) >= (all.at(-1)?.seq ?? 0), 5_000);
    second.close();
    expect([...first.events, ...second.events].map((e) => e.id)).toEqual(all.map((e) => e.seq));
    // The first connection saw every event live (the plan started after it opened): each within 1 s of its commit.
    const delays = first.events.map((e) => e.at - Date.parse(e.event.at));
    expect(Math.max(...delays), JSON.stringify(delays)).toBeLessThan(1_000);
  });
});
