import type { AdversarialState } from "../contracts/concern.js";
import type { DissentEvent } from "../contracts/events.js";
import type { Db } from "./db.js";

/** The state of an issue with no events. */
export function emptyState(): AdversarialState {
  return { phase: null, current_stage: null, route: null, pending_concerns: [], addressed_concerns: [], stage_history: [] };
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
      return {
        ...state,
        pending_concerns: state.pending_concerns.filter((c) => c.id !== e.resolution.concern_id),
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

/** Reads the saved snapshot of an issue's state. */
export function loadState(db: Db, issueId: string): AdversarialState {
  const row = db.prepare<[string], { state: string }>("SELECT state FROM adversarial_state WHERE issue_id = ?").get(issueId);
  return row ? (JSON.parse(row.state) as AdversarialState) : emptyState();
}

/** Append hook: keeps the saved snapshot equal to the fold, inside the append transaction. */
export function stateHook(event: DissentEvent, db: Db): void {
  if (event.issue_id === null || event.type === "ModelCall" || event.type === "LabelChanged") return;
  const next = reduce(loadState(db, event.issue_id), event);
  db.prepare("INSERT INTO adversarial_state (issue_id, state) VALUES (?, ?) ON CONFLICT(issue_id) DO UPDATE SET state = excluded.state").run(
    event.issue_id,
    JSON.stringify(next),
  );
}
