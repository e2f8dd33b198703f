import { isClaim, type AdversarialState, type Concern } from "../contracts/concern.js";
import type { ConcernLineage, ServedEvent, WikiUse } from "./types.js";

/** What lineage needs of a wiki entry. */
export interface WikiRef {
  id: string;
  title: string;
  fingerprint: string;
  stale: boolean;
}

/** The fields that say how a concern's severity came to be, as the concern carries them now. */
const severityFacts = (c: Concern) => ({
  ...(c.raised_severity ? { raised_severity: c.raised_severity } : {}),
  ...(c.severity_change ? { severity_change: c.severity_change } : {}),
  ...(c.second_opinion ? { second_opinion: c.second_opinion } : {}),
  ...(c.known_gap ? { known_gap: c.known_gap } : {}),
  ...(c.also_raised_by?.length ? { also_raised_by: c.also_raised_by } : {}),
});

const start = (c: Concern): ConcernLineage => ({
  id: c.id,
  fingerprint: c.fingerprint,
  concern: c.concern,
  evidence: c.evidence,
  category: c.category,
  severity: c.severity,
  ...severityFacts(c),
  raised_by: c.raised_by,
  stage: c.stage,
  phase: c.phase,
  raised_at: c.raised_at,
  human_required: c.human_required,
  blocked: [],
  forwarded: [],
  resolutions: [],
  status: "pending",
  shipped: null,
  wiki: null,
  given_to: [],
});

/**
 * Every concern of an issue, from the critic that raised it, through each phase it was forwarded
 * to, the claims and settlements, the merge that shipped it, to its wiki entry and the later
 * issues that entry was given to (docs/serve.md). `givenTo` lists an entry's uses across the store.
 */
export function concernLineage(
  issueId: string,
  events: readonly ServedEvent[],
  state: AdversarialState,
  wiki: readonly WikiRef[],
  givenTo: (entryId: string) => readonly WikiUse[],
): ConcernLineage[] {
  const byId = new Map<string, ConcernLineage>();
  const byFingerprint = new Map<string, ConcernLineage>();
  const of = (c: Concern) => {
    let l = byId.get(c.id);
    if (!l) {
      l = start(c);
      byId.set(c.id, l);
      byFingerprint.set(c.fingerprint, l);
    }
    return l;
  };
  for (const e of events) {
    if (e.type === "ConcernBlocked") {
      of(e.concern).blocked.push({ seq: e.seq, at: e.at, stage: e.stage, round: e.round });
    } else if (e.type === "ConcernForwarded") {
      const l = of(e.concern);
      l.severity = e.concern.severity;
      l.human_required = e.concern.human_required;
      // The latest word on its severity replaces what an earlier record said.
      l.raised_severity = e.concern.raised_severity;
      l.severity_change = e.concern.severity_change;
      l.second_opinion = e.concern.second_opinion;
      l.known_gap = e.concern.known_gap;
      l.forwarded.push({ seq: e.seq, at: e.at, to: e.concern.must_address_by, reason: e.reason, severity: e.concern.severity });
    } else if (e.type === "ConcernAddressed") {
      const r = e.resolution;
      const l = byId.get(r.concern_id) ?? byFingerprint.get(r.fingerprint);
      l?.resolutions.push({ seq: e.seq, at: e.at, kind: r.resolution_kind, by: r.resolved_by, settled: !isClaim(r), note: r.note });
    } else if (e.type === "ShippedWithKnownGap") {
      for (const c of e.concerns) of(c).shipped = { pr: e.pr, at: e.at, seq: e.seq };
    }
  }

  const pending = new Set(state.pending_concerns.map((c) => c.id));
  for (const c of state.pending_concerns) of(c); // a pending concern always has a line, events or not
  const entries = new Map(wiki.map((w) => [w.fingerprint, w]));
  const out = [...byId.values()];
  for (const l of out) {
    if (l.shipped) l.status = "shipped";
    else if (pending.has(l.id)) l.status = l.resolutions.some((r) => !r.settled) ? "claimed" : "pending";
    else l.status = "settled";
    const entry = entries.get(l.fingerprint);
    if (entry) {
      l.wiki = { id: entry.id, title: entry.title, stale: entry.stale };
      l.given_to = givenTo(entry.id).filter((u) => u.issue_id !== issueId);
    }
  }
  const first = (l: ConcernLineage) => Math.min(l.blocked[0]?.seq ?? Number.MAX_SAFE_INTEGER, l.forwarded[0]?.seq ?? l.shipped?.seq ?? Number.MAX_SAFE_INTEGER);
  return out.sort((a, b) => first(a) - first(b));
}
