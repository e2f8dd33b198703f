import { concernIdOf } from "../adversarial/concern-id.js";
import type { AdversarialState, Concern } from "../contracts/concern.js";
import type { DissentEvent, NewEvent } from "../contracts/events.js";
import type { PlanRow, PlanStatus, Store } from "../store/port.js";
import type { GateDecision } from "./complexity-gate.js";
import type { ArtifactName } from "./stages.js";

const ARTIFACTS: readonly ArtifactName[] = ["brief", "shape", "plan", "acceptance_criteria"];

/** The key of a finding across an issue's cycles (docs/issue.md): the phase, the critic, and the fingerprint. */
const findingKey = (phase: string, role: string, fp: string) => `${phase}\u0000${role}\u0000${fp}`;

/** Every concern an issue ever recorded (blocked, forwarded or shipped), by finding key → its id, the first one seen. */
export function concernHistory(events: readonly DissentEvent[]): Map<string, string> {
  const ids = new Map<string, string>();
  const see = (c: Concern) => {
    const key = findingKey(c.phase, c.raised_by, c.fingerprint);
    if (!ids.has(key)) ids.set(key, c.id);
  };
  for (const e of events) {
    if (e.type === "ConcernForwarded" || e.type === "ConcernBlocked") see(e.concern);
    else if (e.type === "ShippedWithKnownGap") e.concerns.forEach(see);
  }
  return ids;
}

/**
 * An issue's planning cycle, read and written through intent methods (DESIGN: the driver never
 * edits store rows). The same finding (phase, critic, fingerprint) keeps its id in every cycle of the
 * issue, read from the concerns its events recorded, so a replan sends byte-identical requests to
 * every stage whose inputs did not change (docs/issue.md). New ids are handed out in memory and
 * become durable only with the stage (or review) that raised them, so a killed stage re-run hands
 * out the same ids (issue #9 defect 3).
 */
export class PlanningCycle {
  private seq: number;
  /** Ids handed out since the last commit, by finding key. */
  private readonly handed = new Map<string, string>();

  private constructor(
    private readonly store: Store,
    private row: PlanRow,
    private readonly history: Map<string, string>,
  ) {
    this.seq = row.concern_seq;
  }

  /** Resumes the cycle under way, or starts the next one (a finished or never-planned issue). */
  static async startOrResume(store: Store, issueId: string): Promise<PlanningCycle> {
    const known = await store.plan(issueId);
    let row: PlanRow = known ?? { issue_id: issueId, cycle: 0, status: "new", route: null, route_reason: null, calls: 0, cost_usd: 0, concern_seq: 0 };
    if (row.status !== "planning") {
      row = { ...row, cycle: row.cycle + 1, status: "planning", route: null, route_reason: null, calls: 0, cost_usd: 0 };
      await store.savePlan(row);
    }
    const recorded = await store.events({ issueId, types: ["ConcernForwarded", "ConcernBlocked", "ShippedWithKnownGap"] });
    return new PlanningCycle(store, row, concernHistory(recorded));
  }

  /** The issue's current cycle as it is, never a new one: the implement phase works on the plan it made (docs/implement.md). */
  static async current(store: Store, issueId: string): Promise<PlanningCycle | undefined> {
    const row = await store.plan(issueId);
    if (!row) return undefined;
    const recorded = await store.events({ issueId, types: ["ConcernForwarded", "ConcernBlocked", "ShippedWithKnownGap"] });
    return new PlanningCycle(store, row, concernHistory(recorded));
  }

  get issueId(): string {
    return this.row.issue_id;
  }
  get number(): number {
    return this.row.cycle;
  }
  get route(): { route: "trivial" | "load_bearing"; reason: string } | undefined {
    return this.row.route ? { route: this.row.route, reason: this.row.route_reason ?? "" } : undefined;
  }
  /** Network calls this cycle has recorded (the store's count: every one has its ModelCall event). */
  get callsRecorded(): number {
    return this.row.calls;
  }
  get costRecorded(): number {
    return this.row.cost_usd;
  }

  /** The ComplexityGate's decision, once per cycle (a resumed cycle keeps it). */
  async recordRoute(decision: GateDecision): Promise<void> {
    await this.store.transaction(async (tx) => {
      await tx.append([
        { type: "ComplexityGateRouted", issue_id: this.issueId, route: decision.route, reason: decision.reason, source: decision.source, cycle: this.number },
      ]);
      const current = (await tx.plan(this.issueId)) ?? this.row;
      this.row = { ...current, route: decision.route, route_reason: decision.reason };
      await tx.savePlan(this.row);
    });
  }

  /** The artifacts this cycle has made so far. */
  async artifacts(): Promise<Partial<Record<ArtifactName, string>>> {
    const out: Partial<Record<ArtifactName, string>> = {};
    for (const name of ARTIFACTS) {
      const text = await this.store.artifact(this.issueId, this.number, name);
      if (text !== undefined) out[name] = text;
    }
    return out;
  }

  /** Stages of this cycle already finished (`budget` and `crashed` count as finished). */
  async finishedStages(): Promise<Set<string>> {
    const state = await this.store.state(this.issueId);
    return new Set(state.stage_history.filter((s) => s.cycle === this.number).map((s) => s.stage));
  }

  state(): Promise<AdversarialState> {
    return this.store.state(this.issueId);
  }

  /**
   * The id for a concern: the id the same finding (phase, critic, fingerprint) had before in this
   * issue; else an already pending concern's with this fingerprint (it is the same concern, tracked);
   * else a new `{PHASE}-{ROLE}-{NNN}`.
   */
  concernId(pending: AdversarialState["pending_concerns"], fp: string, phase: string, role: string): string {
    const key = findingKey(phase, role, fp);
    const before = this.history.get(key) ?? this.handed.get(key);
    if (before) return before;
    const tracked = pending.find((c) => c.fingerprint === fp);
    if (tracked) return tracked.id;
    const id = concernIdOf(phase, role, ++this.seq);
    this.handed.set(key, id);
    return id;
  }

  /** Forgets ids handed out since the last commit (a stage that will be re-run). */
  rewindIds(): void {
    this.seq = this.row.concern_seq;
    this.handed.clear();
  }

  /** Ids handed out are now on the record: later stages of this run reuse them like any recorded one. */
  private keepIds(): void {
    for (const [k, id] of this.handed) if (!this.history.has(k)) this.history.set(k, id);
    this.handed.clear();
  }

  /** Commits one stage atomically: its artifact, its records (its rounds), its events and the concern counter (false if it was already committed). */
  async commitStage(
    stage: string,
    artifact: { name: ArtifactName; content: string } | undefined,
    events: NewEvent[],
    records: { name: string; content: string }[] = [],
  ): Promise<boolean> {
    const done = await this.store.commitStage({
      issueId: this.issueId,
      cycle: this.number,
      stage,
      ...(artifact ? { artifact } : {}),
      ...(records.length ? { records } : {}),
      events,
      concernSeq: this.seq,
    });
    this.row = { ...this.row, concern_seq: this.seq };
    this.keepIds();
    return done;
  }

  /** Commits the trivial route's plan with its events. */
  async commitPlan(content: string, events: NewEvent[]): Promise<void> {
    await this.store.transaction(async (tx) => {
      await tx.putArtifact(this.issueId, this.number, "plan", content);
      await tx.append(events);
      const current = (await tx.plan(this.issueId)) ?? this.row;
      this.row = { ...current, concern_seq: Math.max(current.concern_seq, this.seq) };
      await tx.savePlan(this.row);
    });
    this.keepIds();
  }

  /** Commits events with the concern counter, leaving the cycle's status as it is (the implement review's). */
  async commitEvents(events: NewEvent[]): Promise<void> {
    await this.store.transaction(async (tx) => {
      await tx.append(events);
      const current = (await tx.plan(this.issueId)) ?? this.row;
      this.row = { ...current, concern_seq: Math.max(current.concern_seq, this.seq) };
      await tx.savePlan(this.row);
    });
    this.keepIds();
  }

  /** Ends the cycle with its status; the review's events land in the same transaction. */
  async finish(status: PlanStatus, events: NewEvent[]): Promise<void> {
    await this.store.transaction(async (tx) => {
      await tx.append(events);
      const current = (await tx.plan(this.issueId)) ?? this.row;
      this.row = { ...current, status, concern_seq: Math.max(current.concern_seq, this.seq) };
      await tx.savePlan(this.row);
    });
  }

  /** Re-reads the cycle's counters (the call count moves with each ModelCall event). */
  async refresh(): Promise<void> {
    this.row = (await this.store.plan(this.issueId)) ?? this.row;
  }
}
