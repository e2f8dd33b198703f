import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { AdversarialState, Concern, ConcernResolution, StageRecord as StageRun } from "../../src/contracts/concern.js";
import type { NewEvent } from "../../src/contracts/events.js";
import { memoryDb, type Db } from "../../src/store/db.js";
import { sqliteEventLog, type EventLog } from "../../src/store/event-log.js";
import { emptyState, foldState, loadState, stateHook } from "../../src/store/state.js";

const AT = "2026-05-17T12:00:00.000Z";

function setup(): { db: Db; log: EventLog } {
  const db = memoryDb();
  let t = Date.parse(AT);
  return { db, log: sqliteEventLog(db, [stateHook], () => new Date((t += 1000))) };
}

/** The invariant of issue #3: the saved snapshot always equals the fold of the issue's events. */
function expectSnapshotIsFold(db: Db, log: EventLog, issueId: string): AdversarialState {
  const saved = loadState(db, issueId);
  expect(saved).toEqual(foldState(log.list({ issueId })));
  return saved;
}

const concern = (id: string, over: Partial<Concern> = {}): Concern => ({
  id,
  phase: "plan",
  stage: "plan_council",
  raised_by: "plan.tester",
  severity: "HIGH",
  category: "test_strategy",
  concern: `concern ${id}`,
  evidence: "",
  must_address_by: "spec",
  human_required: false,
  fingerprint: `fp-${id}`,
  raised_at: AT,
  ...over,
});

const stageRun = (stage: string, over: Partial<StageRun> = {}): StageRun => ({
  stage,
  phase: "plan",
  rounds: 1,
  retries: 0,
  outcome: "converged",
  concerns_raised: 0,
  concerns_forwarded: 0,
  duration_ms: 3,
  calls: 2,
  input_tokens: 10,
  output_tokens: 5,
  cycle: 1,
  ...over,
});

const resolution = (concernId: string, over: Partial<ConcernResolution> = {}): ConcernResolution => ({
  concern_id: concernId,
  fingerprint: `fp-${concernId}`,
  resolution_kind: "addressed-in-code",
  note: "done",
  resolved_by: "planner",
  resolved_at: AT,
  ...over,
});

const forwarded = (issue: string | null, c: Concern): NewEvent => ({ type: "ConcernForwarded", issue_id: issue, concern: c, reason: "advisory" });
const addressed = (issue: string | null, r: ConcernResolution): NewEvent => ({ type: "ConcernAddressed", issue_id: issue, resolution: r });
const started = (issue: string | null, stage: string, phase: StageRun["phase"] = "plan"): NewEvent => ({ type: "AdversarialStageStarted", issue_id: issue, stage, phase, cycle: 1 });
const completed = (issue: string | null, run: StageRun): NewEvent => ({ type: "AdversarialStageCompleted", issue_id: issue, stage: run.stage, phase: run.phase, cycle: run.cycle, stage_run: run });
const shipped = (issue: string | null, concerns: Concern[]): NewEvent => ({ type: "ShippedWithKnownGap", issue_id: issue, pr: 7, concerns, wiki_entries: [] });
const routed = (issue: string | null, route: "trivial" | "load_bearing"): NewEvent => ({ type: "ComplexityGateRouted", issue_id: issue, route, reason: "r", source: "label", cycle: 1 });

describe("AdversarialState: the fold of an issue's events", () => {
  it("an issue with no events has the empty state, saved and folded", () => {
    const { db, log } = setup();
    expect(expectSnapshotIsFold(db, log, "nobody")).toEqual(emptyState());
    expect(emptyState()).toEqual({ phase: null, current_stage: null, route: null, pending_concerns: [], addressed_concerns: [], stage_history: [] });
  });

  it("follows a planning run, the snapshot equal to the fold after every event", () => {
    const { db, log } = setup();
    const steps: [NewEvent, (s: AdversarialState) => void][] = [
      [routed("i1", "load_bearing"), (s) => expect(s.route).toBe("load_bearing")],
      [started("i1", "discover", "discover"), (s) => expect([s.phase, s.current_stage]).toEqual(["discover", "discover"])],
      [forwarded("i1", concern("A")), (s) => expect(s.pending_concerns.map((c) => c.id)).toEqual(["A"])],
      [completed("i1", stageRun("discover", { phase: "discover" })), (s) => expect([s.current_stage, s.stage_history.map((r) => r.stage)]).toEqual([null, ["discover"]])],
      [started("i1", "plan_council"), (s) => expect([s.phase, s.current_stage]).toEqual(["plan", "plan_council"])],
      [forwarded("i1", concern("B")), (s) => expect(s.pending_concerns.map((c) => c.id)).toEqual(["A", "B"])],
      [forwarded("i1", concern("A", { severity: "LOW", must_address_by: "implement" })), (s) => expect(s.pending_concerns.map((c) => [c.id, c.severity])).toEqual([["A", "LOW"], ["B", "HIGH"]])],
      [addressed("i1", resolution("B")), (s) => expect([s.pending_concerns.map((c) => c.id), s.addressed_concerns.map((r) => r.concern_id)]).toEqual([["A"], ["B"]])],
      [completed("i1", stageRun("plan_council")), (s) => expect(s.stage_history.map((r) => r.stage)).toEqual(["discover", "plan_council"])],
      [{ type: "LabelChanged", issue_id: "i1", added: ["dissent-ready"], removed: ["dissent-plan"], labels: ["dissent-ready"] }, () => undefined],
      [shipped("i1", [concern("A")]), (s) => expect([s.pending_concerns, s.phase, s.current_stage]).toEqual([[], null, null])],
    ];
    for (const [event, check] of steps) {
      log.append(event);
      check(expectSnapshotIsFold(db, log, "i1"));
    }
    const final = loadState(db, "i1");
    expect(final.addressed_concerns).toEqual([resolution("B")]);
    expect(final.stage_history).toHaveLength(2);
    expect(final.route).toBe("load_bearing");
  });

  it("ConcernForwarded upserts by id: a re-forwarded concern replaces the old one in place", () => {
    const { db, log } = setup();
    log.append(forwarded("i1", concern("A")));
    log.append(forwarded("i1", concern("B")));
    log.append(forwarded("i1", concern("A", { must_address_by: "implement", severity: "MEDIUM" })));
    const s = expectSnapshotIsFold(db, log, "i1");
    expect(s.pending_concerns).toEqual([concern("A", { must_address_by: "implement", severity: "MEDIUM" }), concern("B")]);
  });

  it("ConcernAddressed removes the concern from pending and records the resolution", () => {
    const { db, log } = setup();
    log.append(forwarded("i1", concern("A")));
    log.append(forwarded("i1", concern("B")));
    log.append(addressed("i1", resolution("A", { resolution_kind: "deferred" })));
    const s = expectSnapshotIsFold(db, log, "i1");
    expect(s.pending_concerns.map((c) => c.id)).toEqual(["B"]);
    expect(s.addressed_concerns).toEqual([resolution("A", { resolution_kind: "deferred" })]);
  });

  it("StageCompleted appends its StageRun to stage_history, in order, repeats included", () => {
    const { db, log } = setup();
    const runs = [stageRun("discover", { phase: "discover" }), stageRun("plan_council", { outcome: "oscillation", rounds: 2, retries: 1 }), stageRun("plan_council", { cycle: 2 })];
    for (const r of runs) log.append(completed("i1", r));
    expect(expectSnapshotIsFold(db, log, "i1").stage_history).toEqual(runs);
  });

  it("ShippedWithKnownGap clears pending but keeps what was addressed and the history", () => {
    const { db, log } = setup();
    log.append(forwarded("i1", concern("A")));
    log.append(forwarded("i1", concern("B")));
    log.append(addressed("i1", resolution("B")));
    log.append(completed("i1", stageRun("spec", { phase: "spec" })));
    log.append(shipped("i1", [concern("A")]));
    const s = expectSnapshotIsFold(db, log, "i1");
    expect(s.pending_concerns).toEqual([]);
    expect(s.addressed_concerns).toEqual([resolution("B")]);
    expect(s.stage_history.map((r) => r.stage)).toEqual(["spec"]);
  });

  it("keeps issues apart: one issue's events never touch another's state", () => {
    const { db, log } = setup();
    log.append(forwarded("i1", concern("A")));
    log.append(forwarded("i2", concern("A", { severity: "LOW" })));
    log.append(addressed("i2", resolution("A")));
    log.append(completed("i2", stageRun("spec", { phase: "spec" })));
    log.append(shipped("i3", [])); // a third issue shipping clears nothing of the others
    const s1 = expectSnapshotIsFold(db, log, "i1");
    const s2 = expectSnapshotIsFold(db, log, "i2");
    expectSnapshotIsFold(db, log, "i3");
    expect(s1.pending_concerns).toEqual([concern("A")]);
    expect(s1.addressed_concerns).toEqual([]);
    expect(s1.stage_history).toEqual([]);
    expect(s2.pending_concerns).toEqual([]);
    expect(s2.addressed_concerns).toEqual([resolution("A")]);
  });

  it("events without an issue change no issue's state", () => {
    const { db, log } = setup();
    log.append(forwarded("i1", concern("A")));
    log.append(forwarded(null, concern("B")));
    log.append(shipped(null, []));
    expect(expectSnapshotIsFold(db, log, "i1").pending_concerns.map((c) => c.id)).toEqual(["A"]);
  });

  it("a snapshot-and-event pair rolls back together: a failing append leaves both as they were", () => {
    const db = memoryDb();
    const log = sqliteEventLog(db, [
      stateHook,
      (e) => {
        if (e.type === "ConcernAddressed") throw new Error("disk full");
      },
    ]);
    log.append(forwarded("i1", concern("A")));
    expect(() => log.append(addressed("i1", resolution("A")))).toThrow("disk full");
    const s = expectSnapshotIsFold(db, log, "i1");
    expect(s.pending_concerns.map((c) => c.id)).toEqual(["A"]);
    expect(s.addressed_concerns).toEqual([]);
  });

  it("is a pure fold: folding the same events twice gives equal states, and the input is not mutated", () => {
    const { log } = setup();
    log.append(forwarded("i1", concern("A")));
    log.append(addressed("i1", resolution("A")));
    log.append(completed("i1", stageRun("spec", { phase: "spec" })));
    const events = log.list({ issueId: "i1" });
    const frozen = JSON.stringify(events);
    expect(foldState(events)).toEqual(foldState(events));
    expect(JSON.stringify(events)).toBe(frozen);
  });
});

describe("AdversarialState: snapshot equals fold over random event sequences (property)", () => {
  const ISSUES = ["i1", "i2", "i3"] as const;
  const IDS = ["A", "B", "C", "D"] as const;
  const STAGES = ["discover", "shape", "plan_council", "spec"] as const;

  const arbIssue = fc.constantFrom<string | null>(...ISSUES, null);
  const arbEvent: fc.Arbitrary<NewEvent> = fc.oneof(
    fc.record({ issue: arbIssue, id: fc.constantFrom(...IDS), severity: fc.constantFrom("CRITICAL", "HIGH", "MEDIUM", "LOW" as const), by: fc.constantFrom("spec", "review", "implement" as const) }).map(
      ({ issue, id, severity, by }) => forwarded(issue, concern(id, { severity, must_address_by: by })),
    ),
    fc.record({ issue: arbIssue, id: fc.constantFrom(...IDS, "UNKNOWN"), kind: fc.constantFrom("trivial", "deferred", "ignored" as const) }).map(({ issue, id, kind }) => addressed(issue, resolution(id, { resolution_kind: kind }))),
    fc.record({ issue: arbIssue, stage: fc.constantFrom(...STAGES) }).map(({ issue, stage }) => started(issue, stage)),
    fc.record({ issue: arbIssue, stage: fc.constantFrom(...STAGES), rounds: fc.integer({ min: 0, max: 4 }) }).map(({ issue, stage, rounds }) => completed(issue, stageRun(stage, { rounds, retries: Math.max(0, rounds - 1) }))),
    fc.record({ issue: arbIssue, ids: fc.subarray([...IDS]) }).map(({ issue, ids }) => shipped(issue, ids.map((id) => concern(id)))),
    fc.record({ issue: arbIssue, route: fc.constantFrom("trivial", "load_bearing" as const) }).map(({ issue, route }) => routed(issue, route)),
    arbIssue.map((issue): NewEvent => ({ type: "LabelChanged", issue_id: issue, added: ["dissent-plan"], removed: [], labels: ["dissent-plan"] })),
    arbIssue.map(
      (issue): NewEvent => ({
        type: "ModelCall",
        issue_id: issue,
        role: "plan.tester",
        provider: "p",
        model: "m",
        route: "primary",
        cached: false,
        latency_ms: 1,
        input_tokens: 1,
        output_tokens: 1,
        request_hash: "h",
        prompt_chars: 1,
      }),
    ),
  );

  /** An independent model of the rules, per issue. */
  interface Model {
    pending: Map<string, Concern>; // insertion order = pending order
    addressed: string[];
    history: string[];
  }
  const emptyModel = (): Model => ({ pending: new Map(), addressed: [], history: [] });
  function step(m: Model, e: NewEvent): void {
    if (e.type === "ConcernForwarded") m.pending.set(e.concern.id, e.concern);
    else if (e.type === "ConcernAddressed") {
      m.pending.delete(e.resolution.concern_id);
      m.addressed.push(e.resolution.concern_id);
    } else if (e.type === "AdversarialStageCompleted") m.history.push(e.stage_run.stage);
    else if (e.type === "ShippedWithKnownGap") m.pending.clear();
  }

  it("after every append, every issue's saved state equals the fold of its listed events, and obeys the rules", () => {
    fc.assert(
      fc.property(fc.array(arbEvent, { maxLength: 40 }), (events) => {
        const { db, log } = setup();
        const models = new Map<string, Model>(ISSUES.map((i) => [i, emptyModel()]));
        for (const e of events) {
          log.append(e);
          if (e.issue_id !== null) step(models.get(e.issue_id) as Model, e);
          for (const issue of ISSUES) {
            const s = expectSnapshotIsFold(db, log, issue);
            const m = models.get(issue) as Model;
            expect(s.pending_concerns).toEqual([...m.pending.values()]);
            expect(s.addressed_concerns.map((r) => r.concern_id)).toEqual(m.addressed);
            expect(s.stage_history.map((r) => r.stage)).toEqual(m.history);
          }
        }
        // Listing is oldest first and complete: the issue's events, in the order appended.
        for (const issue of ISSUES) {
          expect(log.list({ issueId: issue }).map(({ at: _at, ...rest }) => rest)).toEqual(events.filter((e) => e.issue_id === issue));
        }
        expect(log.list().map(({ at: _at, ...rest }) => rest)).toEqual(events);
      }),
      { numRuns: 150 },
    );
  });

  it("the snapshot built incrementally equals a fresh fold, even when one store serves several logs in turn", () => {
    fc.assert(
      fc.property(fc.array(arbEvent, { maxLength: 30 }), fc.nat({ max: 30 }), (events, cut) => {
        const db = memoryDb();
        // A first process appends part of the events, a second (new log on the same store) the rest.
        const first = sqliteEventLog(db, [stateHook]);
        for (const e of events.slice(0, cut)) first.append(e);
        const second = sqliteEventLog(db, [stateHook]);
        for (const e of events.slice(cut)) second.append(e);
        for (const issue of ISSUES) expectSnapshotIsFold(db, second, issue);
      }),
      { numRuns: 100 },
    );
  });
});
