import { isClaim, type AdversarialState } from "../contracts/concern.js";
import type { DissentEvent, ModelCallEvent, NewEvent } from "../contracts/events.js";
import { redactDeep } from "../redact.js";

/** The state of an issue with no events. */
export function emptyState(): AdversarialState {
  return { phase: null, current_stage: null, route: null, pending_concerns: [], addressed_concerns: [], stage_history: [] };
}

/** Events that change an issue's AdversarialState (ModelCall and LabelChanged do not). */
export const FOLDED: ReadonlySet<DissentEvent["type"]> = new Set([
  "AdversarialStageStarted",
  "AdversarialStageCompleted",
  "ComplexityGateRouted",
  "ConcernForwarded",
  "ConcernAddressed",
  "ShippedWithKnownGap",
]);

/**
 * An event as every store appends it: stamped with `at` — the store's clock, or the time the event
 * carries when it was held back before its commit (a stage's buffered events) — keys in
 * docs/issue.md's order (`type`, `at`, `issue_id`, …), then redacted.
 */
export function stampEvent(input: NewEvent, at: string, redact: (text: string) => string): DissentEvent {
  const { type, at: happened, ...rest } = input;
  return redactDeep({ type, at: happened ?? at, ...rest } as DissentEvent, redact);
}

/** A network call of an issue: it counts against its planning cycle's calls and dollars (a cache hit is free). */
export function countsCall(e: DissentEvent): e is ModelCallEvent & { issue_id: string } {
  return e.type === "ModelCall" && !e.cached && e.issue_id !== null;
}

/** One step of the fold: AdversarialState is nothing but the reduction of an issue's events (ADR-0064). */
export function reduce(state: AdversarialState, e: DissentEvent): AdversarialState {
  switch (e.type) {
    case "AdversarialStageStarted":
      return { ...state, phase: e.phase, current_stage: e.stage };
    case "AdversarialStageCompleted":
      return { ...state, current_stage: null, stage_history: [...state.stage_history, e.stage_run] };
    case "ComplexityGateRouted":
      return { ...state, route: e.route };
    case "ConcernForwarded": {
      const i = state.pending_concerns.findIndex((c) => c.id === e.concern.id);
      const pending = [...state.pending_concerns];
      if (i === -1) pending.push(e.concern);
      else pending[i] = e.concern;
      return { ...state, pending_concerns: pending };
    }
    case "ConcernAddressed":
      // A claim (settled: false, or a model's deferral — in logs older than the flag too) is recorded, but the concern stays pending (docs/issue.md).
      return {
        ...state,
        pending_concerns: isClaim(e.resolution) ? state.pending_concerns : state.pending_concerns.filter((c) => c.id !== e.resolution.concern_id),
        addressed_concerns: [...state.addressed_concerns, e.resolution],
      };
    case "ShippedWithKnownGap":
      // What shipped is now a recorded gap (and, if serious, a wiki entry): nothing is pending any more.
      return { ...state, phase: null, current_stage: null, pending_concerns: [] };
    default:
      return state;
  }
}

/** Folds a list of one issue's events, oldest first. */
export function foldState(events: readonly DissentEvent[]): AdversarialState {
  return events.reduce(reduce, emptyState());
}
