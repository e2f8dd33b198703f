/**
 * The live stream (docs/serve.md): an event committed by another process — a separate
 * `dissent issue plan` — reaches a client of `dissent serve` within 1 s, and a client that
 * reconnects with Last-Event-ID misses nothing and gets nothing twice.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { ServedEvent } from "../../src/read-models.js";
import { startDissent, until } from "../support/proc.js";
import { openStream } from "./sse-client.js";
import { getJson, serve, serveWorld, type ServeWorld, type Serving } from "./world.js";

vi.setConfig({ testTimeout: 180_000, hookTimeout: 120_000 });

let w: ServeWorld;
let s: Serving;

beforeAll(async () => {
  w = await serveWorld();
  await w.newIssue("Warm up the store", "One issue so the store exists before the server starts.", ["dissent-trivial"]);
  s = await serve(w);
});

afterAll(async () => {
  await s?.stop();
  await w?.close();
});

/** Starts `dissent issue plan ID` as its own process (the server shares only the store with it). */
function planElsewhere(id: string) {
  return startDissent(["issue", "plan", id, "--json"], { cwd: w.dir, env: { DISSENT_HOME: w.home } });
}

async function eventsAfter(seq: number): Promise<ServedEvent[]> {
  const { body } = await getJson<{ events: ServedEvent[] }>(s.url, `/api/events?after=${seq}&limit=1000`);
  return body.events;
}

describe("the event stream", () => {
  it("delivers an event committed by another process within 1 s", async () => {
    const id = await w.newIssue("Stream me", "Plan me in another process while the dashboard listens.");
    w.slowDown(40); // a plan that takes a few seconds: events arrive spread out, as in real use
    const client = openStream(new URL("/api/events/stream", s.url).href);
    expect(await client.opened).toBe(200);
    const plan = planElsewhere(id);
    const result = await plan.done;
    w.slowDown(0);
    expect(result.code, result.stderr).toBe(0);
    await until(() => client.events.some((e) => e.event.type === "LabelChanged" && e.event.labels.includes("dissent-ready")), 5_000);
    client.close();
    const mine = client.events.filter((e) => e.event.issue_id === id);
    expect(mine.length).toBeGreaterThan(20);
    // `at` is stamped as the event is appended, inside the committing transaction.
    const delays = mine.map((e) => e.at - Date.parse(e.event.at));
    const worst = Math.max(...delays);
    expect(worst, `delays ${JSON.stringify(delays)}`).toBeLessThan(1_000);
    expect(mine.map((e) => e.id)).toEqual(mine.map((e) => e.event.seq));
  });

  it("resumes after Last-Event-ID: a reconnecting client misses nothing and gets nothing twice", async () => {
    const id = await w.newIssue("Reconnect me", "The client drops its connection in the middle of this plan.");
    const start = (await getJson<{ last_seq: number }>(s.url, "/api/events?limit=1")).body.last_seq;
    w.slowDown(40);
    const first = openStream(new URL(`/api/events/stream?after=${start}`, s.url).href);
    expect(await first.opened).toBe(200);
    const plan = planElsewhere(id);
    await until(() => first.events.length >= 8, 60_000);
    first.close(); // the network drops
    await first.ended;
    const last = first.events.at(-1)?.id ?? start;
    await new Promise((r) => setTimeout(r, 700)); // events keep being committed while nobody listens
    const second = openStream(new URL("/api/events/stream", s.url).href, { "last-event-id": String(last) });
    expect(await second.opened).toBe(200);
    const result = await plan.done;
    w.slowDown(0);
    expect(result.code, result.stderr).toBe(0);
    const all = await eventsAfter(start);
    await until(() => (second.events.at(-1)?.id ?? 0) >= (all.at(-1)?.seq ?? 0), 5_000);
    second.close();
    const got = [...first.events, ...second.events].map((e) => e.id);
    expect(got).toEqual(all.map((e) => e.seq));
    expect(first.events.length).toBeGreaterThan(0);
    expect(second.events[0]?.id).toBe(all.find((e) => e.seq > last)?.seq); // committed while nobody listened, delivered on resume
  });

  it("filters one issue's events with ?issue=ID", async () => {
    const id = await w.newIssue("Only mine", "Only this issue's events on this stream.", ["dissent-trivial"]);
    const client = openStream(new URL(`/api/events/stream?after=0&issue=${id}`, s.url).href);
    const other = await w.newIssue("Not mine", "Another issue.", ["dissent-trivial"]);
    const r = await planElsewhere(id).done;
    expect(r.code, r.stderr).toBe(0);
    await until(() => client.events.some((e) => e.event.type === "LabelChanged" && e.event.labels.includes("dissent-ready")), 5_000);
    client.close();
    expect(new Set(client.events.map((e) => e.event.issue_id))).toEqual(new Set([id]));
    expect(client.events.some((e) => e.event.issue_id === other)).toBe(false);
    expect(client.events[0]?.event.type).toBe("LabelChanged"); // read back from the start: the issue's creation
  });
});
