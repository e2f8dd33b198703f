import { addCall, callRow, copyUsage, emptyUsage } from "./usage.js";
import type { AuditRun, CallRow, CostStats, Estimator, ServedEvent, Usage, UsageRow, WikiUse } from "./types.js";

/** Roles of `dissent run` (docs/run.md). */
const RUN_ROLES = new Set(["executor", "challenger", "revision"]);

/**
 * A fold of the whole event log kept in memory: costs by role, model, day and issue; the audit runs
 * of `dissent run`; and which issues each wiki entry was given to. Built once from the store, then
 * fed each new event as it is committed, so no request has to read the log again.
 */
export class EventIndex {
  /** The event types the index folds; the rest only move `lastSeq`. */
  static readonly TYPES: readonly ServedEvent["type"][] = ["ModelCall", "ComplexityGateRouted"];

  private readonly totals = emptyUsage();
  private readonly byRole = new Map<string, Usage>();
  private readonly byModel = new Map<string, Usage>();
  private readonly byDay = new Map<string, Usage>();
  private readonly byIssue = new Map<string, Usage>();
  /** Each issue's current planning cycle (and the next, opened by a gate call before its route is recorded). */
  private readonly cycles = new Map<string, { current: Usage; next?: Usage }>();
  private readonly runs = new Map<string, AuditRun>();
  private readonly wikiUses = new Map<string, Map<string, WikiUse>>();
  private seq = 0;

  /** `estimate` prices the calls of unknown price from their tokens (docs/serve.md "Cost"). */
  constructor(private readonly estimate?: Estimator) {}

  /** The last `seq` folded in. */
  get lastSeq(): number {
    return this.seq;
  }

  /** Marks the log as folded up to `seq` (after a read of only the indexed types). */
  advance(seq: number): void {
    this.seq = Math.max(this.seq, seq);
  }

  /** Folds one event in (events at or below `lastSeq` are ignored: feeding twice is harmless). */
  apply(e: ServedEvent): void {
    if (e.seq <= this.seq) return;
    this.seq = e.seq;
    if (e.type === "ComplexityGateRouted" && e.issue_id !== null) {
      // A cycle opens with its gate call (if the gate asked a model) and is routed just after.
      const c = this.cycles.get(e.issue_id);
      this.cycles.set(e.issue_id, { current: c?.next ?? emptyUsage() });
      return;
    }
    if (e.type !== "ModelCall") return;
    const row = callRow(e, this.estimate);
    addCall(this.totals, row);
    bump(this.byRole, row.role, row);
    bump(this.byModel, `${row.provider}:${row.model}`, row);
    bump(this.byDay, row.at.slice(0, 10), row);
    if (row.issue_id !== null) {
      bump(this.byIssue, row.issue_id, row);
      let c = this.cycles.get(row.issue_id);
      if (!c) this.cycles.set(row.issue_id, (c = { current: emptyUsage() }));
      if (row.role === "complexity_gate") addCall((c.next ??= emptyUsage()), row);
      else addCall(c.current, row);
    }
    if (row.run_id && RUN_ROLES.has(row.role)) this.addToRun(row.run_id, row);
    if (row.issue_id !== null) {
      for (const entry of row.wiki_entries ?? []) {
        let uses = this.wikiUses.get(entry);
        if (!uses) this.wikiUses.set(entry, (uses = new Map()));
        if (!uses.has(row.issue_id)) uses.set(row.issue_id, { issue_id: row.issue_id, at: row.at, seq: row.seq });
      }
    }
  }

  private addToRun(id: string, row: CallRow): void {
    let run = this.runs.get(id);
    if (!run) {
      run = {
        run_id: id,
        started_at: row.at,
        last_at: row.at,
        first_seq: row.seq,
        audit: false,
        revised: false,
        challenger_failed: false,
        roles: [],
        models: [],
        calls: [],
        usage: emptyUsage(),
      };
      this.runs.set(id, run);
    }
    run.calls.push(row);
    run.last_at = row.at;
    addCall(run.usage, row);
    if (!run.roles.includes(row.role)) run.roles.push(row.role);
    const model = `${row.provider}:${row.model}`;
    if (!run.models.includes(model)) run.models.push(model);
    if (row.role === "challenger") {
      run.audit = true;
      if (row.error) run.challenger_failed = true;
    }
    if (row.role === "revision") run.revised = true;
  }

  /** Calls, tokens and dollars by role, model, day and issue. */
  stats(): CostStats {
    return {
      totals: copyUsage(this.totals),
      by_role: rows(this.byRole, byCost),
      by_model: rows(this.byModel, byCost),
      by_day: rows(this.byDay, (a, b) => (a.key < b.key ? -1 : 1)),
      by_issue: rows(this.byIssue, byCost).slice(0, 50),
      runs: this.runs.size,
      last_seq: this.seq,
    };
  }

  /** Every call of one issue (all cycles), summed. */
  issueUsage(issueId: string): Usage {
    return copyUsage(this.byIssue.get(issueId) ?? emptyUsage());
  }

  /** The calls of an issue's current planning cycle, summed (what `issue show` prices). */
  cycleUsage(issueId: string): Usage {
    const c = this.cycles.get(issueId);
    return copyUsage(c?.current ?? emptyUsage());
  }

  /** The latest runs first, without their calls. */
  listRuns(limit: number): Omit<AuditRun, "calls">[] {
    return [...this.runs.values()]
      .sort((a, b) => b.first_seq - a.first_seq)
      .slice(0, limit)
      .map(({ calls: _calls, ...r }) => ({ ...r, usage: copyUsage(r.usage) }));
  }

  run(id: string): AuditRun | undefined {
    const r = this.runs.get(id);
    return r ? { ...r, calls: [...r.calls], usage: copyUsage(r.usage) } : undefined;
  }

  /** The issues a wiki entry was given to, in the order they first got it. */
  givenTo(entryId: string): WikiUse[] {
    return [...(this.wikiUses.get(entryId)?.values() ?? [])];
  }
}

function bump(map: Map<string, Usage>, key: string, row: CallRow): void {
  let u = map.get(key);
  if (!u) map.set(key, (u = emptyUsage()));
  addCall(u, row);
}

const byCost = (a: UsageRow, b: UsageRow) => b.known_usd - a.known_usd || b.calls - a.calls || (a.key < b.key ? -1 : 1);

function rows(map: Map<string, Usage>, order: (a: UsageRow, b: UsageRow) => number): UsageRow[] {
  return [...map.entries()].map(([key, u]) => ({ key, ...copyUsage(u) })).sort(order);
}
