import type { AddressedItem, Concern, ConcernResolution, MustAddressBy } from "../contracts/concern.js";
import type { NewEvent } from "../contracts/events.js";

/**
 * Each `addressed` item naming a concern the role was given becomes a ConcernResolution and a
 * ConcernAddressed event (ids it was never given are ignored; a concern is resolved once).
 */
export function resolutionEvents(issueId: string, given: readonly Concern[], addressed: readonly AddressedItem[], by: string, now: () => string): NewEvent[] {
  const out: NewEvent[] = [];
  const seen = new Set<string>();
  for (const a of addressed) {
    const concern = given.find((c) => c.id === a.concern_id);
    if (!concern || seen.has(concern.id)) continue;
    seen.add(concern.id);
    const resolution: ConcernResolution = {
      concern_id: concern.id,
      fingerprint: concern.fingerprint,
      resolution_kind: a.resolution_kind,
      note: a.note,
      resolved_by: by,
      resolved_at: now(),
    };
    out.push({ type: "ConcernAddressed", issue_id: issueId, resolution });
  }
  return out;
}

/** The concern ids a batch of events resolves. */
const resolvedIds = (events: readonly NewEvent[]) => new Set(events.flatMap((e) => (e.type === "ConcernAddressed" ? [e.resolution.concern_id] : [])));

/** Concerns due at a phase that it left unanswered move on to `to` (ADR-0064 wide-loop forwarding). */
export function carryEvents(issueId: string, due: readonly Concern[], answered: readonly NewEvent[], to: MustAddressBy, reason: "carried" | "review"): NewEvent[] {
  const done = resolvedIds(answered);
  return due
    .filter((c) => !done.has(c.id) && c.must_address_by !== to)
    .map((c) => ({ type: "ConcernForwarded", issue_id: issueId, concern: { ...c, must_address_by: to }, reason }) as NewEvent);
}
