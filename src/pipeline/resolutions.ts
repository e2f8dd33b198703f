import { isClaim, isSerious, type AddressedItem, type Concern, type ConcernResolution, type MustAddressBy } from "../contracts/concern.js";
import type { NewEvent } from "../contracts/events.js";

/** Who answered: a producer (its word is a claim on serious concerns), the plan reviewer (confirms), or a person. */
export type Resolver = { kind: "producer"; role: string } | { kind: "reviewer" } | { kind: "human" };

/** A concern a producer's word alone cannot settle (docs/issue.md): CRITICAL, HIGH or human_required. */
export const needsConfirmation = (c: Concern) => isSerious(c.severity) || c.human_required;

/**
 * Each `addressed` item naming a concern the role was given becomes a ConcernResolution and a
 * ConcernAddressed event (ids it was never given are ignored; a concern is resolved once per reply).
 * A producer's resolution settles a MEDIUM or LOW concern; on a CRITICAL, HIGH or human_required
 * one it is a claim (`settled: false`) the reviewer or a person must confirm, and `ignored` is never
 * accepted for those from anyone but a person. A deferral settles nothing unless a person makes it:
 * a producer's is a claim on any concern (it stays pending, and the reviewer sees it), the reviewer's
 * is not recorded (what it leaves pending goes on to implementation anyway).
 */
export function resolutionEvents(issueId: string, given: readonly Concern[], addressed: readonly AddressedItem[], by: Resolver, now: () => string): NewEvent[] {
  const out: NewEvent[] = [];
  const seen = new Set<string>();
  const name = by.kind === "producer" ? by.role : by.kind === "reviewer" ? "plan_reviewer" : "human";
  for (const a of addressed) {
    const concern = given.find((c) => c.id === a.concern_id);
    if (!concern || seen.has(concern.id)) continue;
    const serious = needsConfirmation(concern);
    if (serious && by.kind !== "human" && a.resolution_kind === "ignored") continue;
    if (by.kind === "reviewer" && a.resolution_kind === "deferred") continue;
    const claim = by.kind === "producer" && (serious || a.resolution_kind === "deferred");
    seen.add(concern.id);
    const resolution: ConcernResolution = {
      concern_id: concern.id,
      fingerprint: concern.fingerprint,
      resolution_kind: a.resolution_kind,
      note: a.note,
      resolved_by: name,
      resolved_at: now(),
      ...(claim ? { settled: false } : {}),
    };
    out.push({ type: "ConcernAddressed", issue_id: issueId, resolution });
  }
  return out;
}

/** The concern ids a batch of events settles (claims do not). */
const settledIds = (events: readonly NewEvent[]) =>
  new Set(events.flatMap((e) => (e.type === "ConcernAddressed" && !isClaim(e.resolution) ? [e.resolution.concern_id] : [])));

/** Concerns due at a phase that it left unsettled move on to `to` (ADR-0064 wide-loop forwarding). */
export function carryEvents(
  issueId: string,
  due: readonly Concern[],
  answered: readonly NewEvent[],
  to: MustAddressBy,
  reason: "carried" | "review",
): NewEvent[] {
  const done = settledIds(answered);
  return due
    .filter((c) => !done.has(c.id) && c.must_address_by !== to)
    .map((c) => ({ type: "ConcernForwarded", issue_id: issueId, concern: { ...c, must_address_by: to }, reason }) as NewEvent);
}
