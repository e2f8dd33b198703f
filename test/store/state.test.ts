/**
 * The pure fold (src/store/state.ts): an issue's AdversarialState is nothing but the reduction of
 * its events. That the store's snapshot always equals this fold is tested in event-log.test.ts.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { AdversarialState } from "../../src/contracts/concern.js";
import type { DissentEvent, NewEvent } from "../../src/contracts/events.js";
import { emptyState, FOLDED, foldState, reduce } from "../../src/store/state.js";
import {
  addressed,
  arbEvent,
  completed,
  concern,
  emptyModel,
  forwarded,
  ISSUES,
  modelCall,
  resolution,
  routed,
  shipped,
  stageRun,
  stamp,
  started,
  step,
  type Model,
} from "./fixtures.js";

/** Folds the given new events (stamped), oldest first. */
const fold = (...events: NewEvent[]): AdversarialState => foldState(events.map((e) => stamp(e)));

describe("AdversarialState: the fold of an issue's events", () => {
  it("an issue with no events has the empty state", () => {
    expect(foldState([])).toEqual(emptyState());
    expect(emptyState()).toEqual({ phase: null, current_stage: null, route: null, pending_concerns: [], addressed_concerns: [], stage_history: [] });
    // A fresh object each time: one issue's state can never leak into another's.
    expect(emptyState()).not.toBe(emptyState());
  });

  it("follows a planning run, event by event", () => {
    const steps: [NewEvent, (s: AdversarialState) => void][] = [
      [routed("i1", "load_bearing"), (s) => expect(s.route).toBe("load_bearing")],
      [started("i1", "discover", "discover"), (s) => expect([s.phase, s.current_stage]).toEqual(["discover", "discover"])],
      [forwarded("i1", concern("A")), (s) => expect(s.pending_concerns.map((c) => c.id)).toEqual(["A"])],
      [
        completed("i1", stageRun("discover", { phase: "discover" })),
        (s) => expect([s.current_stage, s.stage_history.map((r) => r.stage)]).toEqual([null, ["discover"]]),
      ],
      [started("i1", "plan_council"), (s) => expect([s.phase, s.current_stage]).toEqual(["plan", "plan_council"])],
      [forwarded("i1", concern("B")), (s) => expect(s.pending_concerns.map((c) => c.id)).toEqual(["A", "B"])],
      [
        forwarded("i1", concern("A", { severity: "LOW", must_address_by: "implement" })),
        (s) =>
          expect(s.pending_concerns.map((c) => [c.id, c.severity])).toEqual([
            ["A", "LOW"],
            ["B", "HIGH"],
          ]),
      ],
      [
        addressed("i1", resolution("B")),
        (s) => expect([s.pending_concerns.map((c) => c.id), s.addressed_concerns.map((r) => r.concern_id)]).toEqual([["A"], ["B"]]),
      ],
      [completed("i1", stageRun("plan_council")), (s) => expect(s.stage_history.map((r) => r.stage)).toEqual(["discover", "plan_council"])],
      [{ type: "LabelChanged", issue_id: "i1", added: ["dissent-ready"], removed: ["dissent-plan"], labels: ["dissent-ready"] }, () => undefined],
      [modelCall("i1"), () => undefined],
      [shipped("i1", [concern("A")]), (s) => expect([s.pending_concerns, s.phase, s.current_stage]).toEqual([[], null, null])],
    ];
    let state = emptyState();
    const seen: NewEvent[] = [];
    for (const [event, check] of steps) {
      const before = JSON.stringify(state);
      const next = reduce(state, stamp(event));
      expect(JSON.stringify(state), "reduce must not mutate its input").toBe(before);
      seen.push(event);
      expect(next).toEqual(fold(...seen));
      check(next);
      state = next;
    }
    expect(state.addressed_concerns).toEqual([resolution("B")]);
    expect(state.stage_history).toHaveLength(2);
    expect(state.route).toBe("load_bearing");
  });

  it("ConcernForwarded upserts by id: a re-forwarded concern replaces the old one in place", () => {
    const s = fold(
      forwarded("i1", concern("A")),
      forwarded("i1", concern("B")),
      forwarded("i1", concern("A", { must_address_by: "implement", severity: "MEDIUM" })),
    );
    expect(s.pending_concerns).toEqual([concern("A", { must_address_by: "implement", severity: "MEDIUM" }), concern("B")]);
  });

  it("ConcernAddressed removes the concern from pending and records the resolution (a person's deferral settles)", () => {
    const deferred = resolution("A", { resolution_kind: "deferred", resolved_by: "human" });
    const s = fold(forwarded("i1", concern("A")), forwarded("i1", concern("B")), addressed("i1", deferred));
    expect(s.pending_concerns.map((c) => c.id)).toEqual(["B"]);
    expect(s.addressed_concerns).toEqual([deferred]);
  });

  it("a settled resolution (settled: true) removes the concern like one without the field", () => {
    const s = fold(forwarded("i1", concern("A")), addressed("i1", resolution("A", { settled: true })));
    expect(s.pending_concerns).toEqual([]);
    expect(s.addressed_concerns).toEqual([resolution("A", { settled: true })]);
  });

  // r2 (docs/issue.md): a producer's resolution of a CRITICAL, HIGH or human_required concern is a claim.
  it("a claim (settled: false) is recorded in addressed_concerns but the concern stays pending", () => {
    const a = concern("A", { severity: "CRITICAL" });
    const claim = resolution("A", { settled: false });
    const s = fold(forwarded("i1", a), forwarded("i1", concern("B")), addressed("i1", claim));
    expect(s.pending_concerns).toEqual([a, concern("B")]);
    expect(s.addressed_concerns).toEqual([claim]);
  });

  it("a claim confirmed later (by the reviewer or a person) takes the concern off pending; both resolutions are kept", () => {
    const claim = resolution("A", { settled: false });
    const confirmed = resolution("A", { resolved_by: "plan_reviewer" });
    const s = fold(forwarded("i1", concern("A")), addressed("i1", claim), addressed("i1", confirmed));
    expect(s.pending_concerns).toEqual([]);
    expect(s.addressed_concerns).toEqual([claim, confirmed]);
  });

  it("a resolution of an unknown concern is recorded and changes nothing pending", () => {
    const s = fold(forwarded("i1", concern("A")), addressed("i1", resolution("NOPE")));
    expect(s.pending_concerns.map((c) => c.id)).toEqual(["A"]);
    expect(s.addressed_concerns).toEqual([resolution("NOPE")]);
  });

  it("StageCompleted appends its StageRun to stage_history, in order, repeats included", () => {
    const runs = [
      stageRun("discover", { phase: "discover" }),
      stageRun("plan_council", { outcome: "oscillation", rounds: 2, retries: 1 }),
      stageRun("plan_council", { cycle: 2 }),
    ];
    expect(fold(...runs.map((r) => completed("i1", r))).stage_history).toEqual(runs);
  });

  it("ShippedWithKnownGap clears pending but keeps what was addressed and the history", () => {
    const s = fold(
      forwarded("i1", concern("A")),
      forwarded("i1", concern("B")),
      addressed("i1", resolution("B")),
      started("i1", "spec", "spec"),
      completed("i1", stageRun("spec", { phase: "spec" })),
      shipped("i1", [concern("A")]),
    );
    expect(s.pending_concerns).toEqual([]);
    expect(s.addressed_concerns).toEqual([resolution("B")]);
    expect(s.stage_history.map((r) => r.stage)).toEqual(["spec"]);
    expect([s.phase, s.current_stage]).toEqual([null, null]);
  });

  it("ModelCall and LabelChanged are not folded: they leave the state as it was", () => {
    expect(FOLDED.has("ModelCall")).toBe(false);
    expect(FOLDED.has("LabelChanged")).toBe(false);
    const base = fold(forwarded("i1", concern("A")), started("i1", "discover", "discover"));
    const s = reduce(reduce(base, stamp(modelCall("i1"))), stamp({ type: "LabelChanged", issue_id: "i1", added: ["x"], removed: [], labels: ["x"] }));
    expect(s).toEqual(base);
  });

  it("every event type that reduce changes the state for is in FOLDED", () => {
    const samples: NewEvent[] = [
      routed("i1", "trivial"),
      started("i1", "discover", "discover"),
      completed("i1", stageRun("discover", { phase: "discover" })),
      forwarded("i1", concern("A")),
      addressed("i1", resolution("A")),
      shipped("i1", []),
    ];
    for (const e of samples) expect(FOLDED.has(e.type), e.type).toBe(true);
  });

  it("is a pure fold: folding the same events twice gives equal states, and the input is not mutated", () => {
    const events: DissentEvent[] = [forwarded("i1", concern("A")), addressed("i1", resolution("A")), completed("i1", stageRun("spec", { phase: "spec" }))].map(
      (e) => stamp(e),
    );
    const frozen = JSON.stringify(events);
    expect(foldState(events)).toEqual(foldState(events));
    expect(JSON.stringify(events)).toBe(frozen);
  });
});

describe("AdversarialState: the fold obeys the rules over random event sequences (property)", () => {
  it("folding each issue's events gives what an independent model of the rules predicts, after every event", () => {
    fc.assert(
      fc.property(fc.array(arbEvent, { maxLength: 40 }), (events) => {
        const models = new Map<string, Model>(ISSUES.map((i) => [i, emptyModel()]));
        const log: DissentEvent[] = [];
        for (const e of events) {
          log.push(stamp(e));
          if (e.issue_id !== null) step(models.get(e.issue_id) as Model, e);
          for (const issue of ISSUES) {
            const s = foldState(log.filter((x) => x.issue_id === issue));
            const m = models.get(issue) as Model;
            expect(s.pending_concerns).toEqual([...m.pending.values()]);
            expect(s.addressed_concerns.map((r) => r.concern_id)).toEqual(m.addressed);
            expect(s.stage_history.map((r) => r.stage)).toEqual(m.history);
            expect(s.route).toBe(m.route);
          }
        }
      }),
      { numRuns: 150 },
    );
  });

  it("folding is incremental: reducing the rest of the events onto the fold of a prefix gives the fold of all", () => {
    fc.assert(
      fc.property(fc.array(arbEvent, { maxLength: 30 }), fc.nat({ max: 30 }), (events, cut) => {
        const all = events.map((e) => stamp(e));
        const prefix = foldState(all.slice(0, cut));
        expect(all.slice(cut).reduce(reduce, prefix)).toEqual(foldState(all));
      }),
      { numRuns: 100 },
    );
  });
});
