import { describe, expect, it } from "vitest";
import type { DissentEvent, NewEvent } from "../../src/contracts/events.js";
import { memoryDb } from "../../src/store/db.js";
import { sqliteEventLog } from "../../src/store/event-log.js";

/** A clock that ticks one second per reading, from a fixed start. */
function tickingClock(start = Date.parse("2026-05-17T12:00:00.000Z"), step = 1000) {
  let t = start - step;
  return () => new Date((t += step));
}

const label = (issue: string | null, n: number): NewEvent => ({ type: "LabelChanged", issue_id: issue, added: [`l${n}`], removed: [], labels: [`l${n}`] });
const started = (issue: string | null, stage = "discover"): NewEvent => ({ type: "AdversarialStageStarted", issue_id: issue, stage, phase: "discover", cycle: 1 });

describe("sqliteEventLog", () => {
  it("stamps `at` from its clock on append and returns the stored event", () => {
    const log = sqliteEventLog(memoryDb(), [], tickingClock());
    const e = log.append(started("i1"));
    expect(e).toEqual({ ...started("i1"), at: "2026-05-17T12:00:00.000Z" });
    expect(log.list()).toEqual([e]);
  });

  it("lists events oldest first, in append order even when the clock runs backwards", () => {
    const log = sqliteEventLog(memoryDb(), [], tickingClock(Date.parse("2026-05-17T12:00:00.000Z"), -60_000));
    const appended = [label("i1", 1), label("i2", 2), started("i1"), label(null, 3), label("i1", 4)].map((e) => log.append(e));
    expect(log.list()).toEqual(appended);
    expect(log.list().map((e) => (e.type === "LabelChanged" ? e.labels[0] : e.type))).toEqual(["l1", "l2", "AdversarialStageStarted", "l3", "l4"]);
  });

  it("filters by issue, keeping the order; an issue with no events lists none", () => {
    const log = sqliteEventLog(memoryDb(), [], tickingClock());
    const a1 = log.append(label("i1", 1));
    log.append(label("i2", 2));
    log.append(label(null, 3));
    const a2 = log.append(started("i1"));
    expect(log.list({ issueId: "i1" })).toEqual([a1, a2]);
    expect(log.list({ issueId: "i2" }).map((e) => e.issue_id)).toEqual(["i2"]);
    expect(log.list({ issueId: "nope" })).toEqual([]);
    expect(log.list()).toHaveLength(4);
  });

  it("round-trips every field of an event through the store", () => {
    const log = sqliteEventLog(memoryDb(), [], tickingClock());
    const e = log.append({
      type: "ModelCall",
      issue_id: "i1",
      role: "plan.tester",
      provider: "anthropic",
      model: "m",
      route: "primary",
      cached: false,
      latency_ms: 12.5,
      input_tokens: 100,
      output_tokens: 20,
      request_hash: "abc",
      prompt_chars: 400,
      stage: "plan",
      round: 2,
      wiki_entries: ["w1"],
    });
    expect(log.list({ issueId: "i1" })).toEqual([e]);
  });

  it("notifies subscribers with the stamped event, in subscription order, until they unsubscribe", () => {
    const log = sqliteEventLog(memoryDb(), [], tickingClock());
    const seen: [string, DissentEvent][] = [];
    const offA = log.subscribe((e) => seen.push(["a", e]));
    log.subscribe((e) => seen.push(["b", e]));
    const first = log.append(label("i1", 1));
    offA();
    const second = log.append(label(null, 2));
    expect(seen).toEqual([
      ["a", first],
      ["b", first],
      ["b", second],
    ]);
  });

  it("has the event stored by the time a subscriber hears of it", () => {
    const log = sqliteEventLog(memoryDb(), [], tickingClock());
    const listed: number[] = [];
    log.subscribe(() => listed.push(log.list().length));
    log.append(label("i1", 1));
    log.append(label("i1", 2));
    expect(listed).toEqual([1, 2]);
  });

  it("runs hooks inside the append, with the stamped event", () => {
    const hooked: DissentEvent[] = [];
    const log = sqliteEventLog(memoryDb(), [(e) => void hooked.push(e)], tickingClock());
    const e = log.append(started("i1"));
    expect(hooked).toEqual([e]);
  });

  it("does not store an event whose hook fails (hook and event land together or not at all)", () => {
    const log = sqliteEventLog(
      memoryDb(),
      [
        (e) => {
          if (e.type === "AdversarialStageStarted") throw new Error("hook failed");
        },
      ],
      tickingClock(),
    );
    const heard: DissentEvent[] = [];
    log.subscribe((e) => heard.push(e));
    const kept = log.append(label("i1", 1));
    expect(() => log.append(started("i1"))).toThrow("hook failed");
    expect(log.list()).toEqual([kept]);
    expect(heard).toEqual([kept]);
  });

  it("transaction: events appended in it land together, or none of them when it throws", () => {
    const log = sqliteEventLog(memoryDb(), [], tickingClock());
    log.transaction(() => {
      log.append(label("i1", 1));
      log.append(label("i1", 2));
    });
    expect(log.list()).toHaveLength(2);
    expect(() =>
      log.transaction(() => {
        log.append(label("i1", 3));
        throw new Error("abort");
      }),
    ).toThrow("abort");
    expect(log.list().map((e) => (e.type === "LabelChanged" ? e.labels[0] : ""))).toEqual(["l1", "l2"]);
    expect(log.transaction(() => 42)).toBe(42);
  });

  it("keeps one store's events to that store", () => {
    const a = sqliteEventLog(memoryDb(), [], tickingClock());
    const b = sqliteEventLog(memoryDb(), [], tickingClock());
    a.append(label("i1", 1));
    expect(b.list()).toEqual([]);
  });
});
