import type { EventsPort, PlansPort } from "./port.js";

/**
 * The Store's event-log and plan operations, picked from the two sub-ports an adapter built (both
 * adapters compose their Store this way; only the named operations pass, never an adapter's own).
 */
export function logAndPlans(events: EventsPort, plans: PlansPort): EventsPort & PlansPort {
  return {
    append: events.append,
    events: events.events,
    lastSeq: events.lastSeq,
    state: events.state,
    follow: events.follow,
    plan: plans.plan,
    savePlan: plans.savePlan,
    plans: plans.plans,
    putArtifact: plans.putArtifact,
    artifact: plans.artifact,
    commitStage: plans.commitStage,
  };
}
