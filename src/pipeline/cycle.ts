import { concernIdOf } from "../adversarial/concern-id.js";
import type { AdversarialState } from "../contracts/concern.js";
import type { NewEvent } from "../contracts/events.js";
import type { PlanRow, PlanStatus, Store } from "../store/port.js";
import type { GateDecision } from "./complexity-gate.js";
import type { ArtifactName } from "./stages.js";

const ARTIFACTS: readonly ArtifactName[] = ["brief", "shape", "plan", "acceptance_criteria"];

/**
 * An issue's planning cycle, read and written through intent methods (DESIGN: the driver never
 * edits store rows). Concern ids are handed out in memory and become durable only with the stage
 * (or review) that raised them, so a killed stage re-run hands out the same ids and sends
 * byte-identical requests (issue #9 defect 3).
 */
export class PlanningCycle {
  private seq: number;

  private constructor(
    private readonly store: Store,
    private row: PlanRow,
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
    return new PlanningCycle(store, row);
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

  /** The id for a concern with this fingerprint: an already pending one keeps its id; a new one gets `{PHASE}-{ROLE}-{NNN}`. */
  concernId(pending: AdversarialState["pending_concerns"], fp: string, phase: string, role: string): string {
    const known = pending.find((c) => c.fingerprint === fp);
    if (known) return known.id;
    return concernIdOf(phase, role, ++this.seq);
  }

  /** Forgets ids handed out since the last commit (a stage that will be re-run). */
  rewindIds(): void {
    this.seq = this.row.concern_seq;
  }

  /** Commits one stage atomically: its artifact, its events and the concern counter (false if it was already committed). */
  async commitStage(stage: string, artifact: { name: ArtifactName; content: string } | undefined, events: NewEvent[]): Promise<boolean> {
    const done = await this.store.commitStage({
      issueId: this.issueId,
      cycle: this.number,
      stage,
      ...(artifact ? { artifact } : {}),
      events,
      concernSeq: this.seq,
    });
    this.row = { ...this.row, concern_seq: this.seq };
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
