import { callBudget, type IssueBudget } from "../adversarial/budget.js";
import type { CallRecord } from "../contracts/audit.js";
import type { DissentEvent, NewEvent } from "../contracts/events.js";
import { TRANSIENT_LABELS, transition, type StateLabel, type TransientLabel } from "../contracts/labels.js";
import { BudgetExceeded, DissentError, isFatal, messageOf } from "../errors.js";
import { doorOf, networkCalls, type CallDoor } from "../models/call.js";
import { roundUsd } from "../models/pricing.js";
import type { CallContext } from "../models/types.js";
import { countsCall } from "../store/state.js";
import type { LeaseHolder, PlanRow, Store } from "../store/port.js";
import type { Tracker } from "../trackers/port.js";
import { holdLease, processHolder } from "./lease.js";
import { Meter } from "./meter.js";
import type { CodeSource } from "./code-context.js";
import type { CostOf, CriticVoteReport } from "./stage-runner.js";

/**
 * How one run of a command over an issue is set up (ADR-038): `issue plan`, `issue implement` and
 * `pr review` are configurations of this, each adding only what is its own.
 */
export interface IssueRunConfig<F = undefined> {
  store: Store;
  /**
   * What the run is about — an issue's id, or the key a command gives its subject (a pull request's
   * review, say): the lease is held on it, its lifetime usage counted against the ceilings, and every
   * model call's event carries it.
   */
  subject: string;
  /** The call door's configuration; the kernel adds the subject, its budget, the meter, the signal and where events go. */
  calls: CallContext;
  /** The ceilings of the subject's life (docs/issue.md): network calls, dollars and, when set, planning cycles. */
  ceilings: { maxCalls: number; maxUsd?: number | null; maxCycles?: number | null };
  /** What a refused lease says the other process is doing (default: `issue <subject> is being planned`). */
  busy?: string;
  /** How a refusal names the subject (default: `issue <subject>`, "over its planning cycles", "plan the issue again"). */
  words?: CeilingWords;
  /** The subject's labels as read, moved through the transition table; absent, the run moves none (no LabelSession). */
  labels?: { tracker: Tracker; current: readonly string[] };
  /** Who holds the lease (default: this process, a new id per run) and its time to live and renewal period. */
  holder?: LeaseHolder;
  lease?: { ttlMs?: number; renewMs?: number };
  /** Warnings that must not stop the run (a label that could not be removed on the way out). */
  warn?: (message: string) => void;
  /**
   * Runs first under the lease, before any ceiling is checked: what must happen even on a run a
   * ceiling refuses (implement reads its ledger and stops the processes of an attempt that never
   * ended). What it returns is given to `ceiling`, the body and `onError`.
   */
  first?: () => Promise<F>;
  /** The command's own ceilings, checked after the subject's (implement: agent attempts and time); throws to refuse the run. */
  ceiling?: (first: F) => void;
  /**
   * Told of the error the run ends with, before it is reported (never of a lost lease's: the run is
   * no longer this process's): what the command records of its end (implement: an escape goes to a
   * person). `first` is undefined when the run failed before it had returned.
   */
  onError?: (e: unknown, run: { first: F | undefined; labels?: LabelSession }) => Promise<void>;
}

/**
 * What every command run on the kernel is given by the wiring (src/dissent.ts issueDeps): the ports,
 * the call door's configuration, the subject's ceilings, the project's text and code, the lease.
 * `issue implement` and `pr review` add their own settings to it.
 */
export interface RunDeps {
  store: Store;
  tracker: Tracker;
  calls: CallContext;
  maxCalls: number;
  maxUsd?: number | null;
  project?: () => Promise<string | undefined>;
  /** The code the councils read (docs/issue.md "The code the councils read"). */
  code?: () => Promise<CodeSource | undefined>;
  warn?: (message: string) => void;
  now?: () => string;
  holder?: LeaseHolder;
  lease?: { ttlMs?: number; renewMs?: number };
  onVote?: (v: CriticVoteReport) => void;
}

/** What the body of a run is given: set up, metered and bounded; the kernel undoes it on every exit. */
export interface IssueRun {
  subject: string;
  /** The caller's signal joined with the lease's: aborts when either does (Ctrl-C, SIGTERM, a lease taken over). */
  signal: AbortSignal;
  /** The subject's lifetime usage when the run started (its ceilings were checked against it). */
  spent: LifetimeUsage;
  /** The call budget: what is left of the subject's ceilings, reserved as calls are made. */
  budget: IssueBudget;
  /** Every network call of the run, metered in the door (failed ones too, cache hits free). */
  meter: Meter;
  /** The one model door: the subject's budget, meter and signal, each call's event appended to the store. */
  door: CallDoor;
  /** What a call would cost in network calls (0 when cached or replayed). */
  costOf: CostOf;
  /** Appends events to the store. */
  append: (events: NewEvent[]) => Promise<unknown>;
  /** The subject's labels (when the configuration names them). */
  labels?: LabelSession;
}

/** The subject's labels as the run starts: the tracker that moves them and what they are. */
export type RunLabels = NonNullable<IssueRunConfig["labels"]>;

/** A run over a subject with labels. */
export type LabelledRun = IssueRun & { labels: LabelSession };

/**
 * Runs `body` as one run over the subject (ADR-038): holds its lease (one process per subject),
 * checks the ceilings of its life, then gives the body the budget, the meter and the one model door,
 * all under one signal. On every exit the transient label comes off and the lease is released; a
 * lost lease is reported as its own error, not as the interruption it caused.
 */
export async function runIssue<T, F = undefined>(
  config: IssueRunConfig<F> & { labels: RunLabels },
  body: (run: LabelledRun, first: F) => Promise<T>,
): Promise<T>;
export async function runIssue<T, F = undefined>(config: IssueRunConfig<F>, body: (run: IssueRun, first: F) => Promise<T>): Promise<T>;
export async function runIssue<T, F>(config: IssueRunConfig<F>, body: (run: LabelledRun, first: F) => Promise<T>): Promise<T> {
  const { store, subject } = config;
  const lease = await holdLease(store, subject, config.holder ?? processHolder(), { ...config.lease, ...(config.busy ? { busy: config.busy } : {}) });
  const signal = config.calls.signal ? AbortSignal.any([config.calls.signal, lease.lost]) : lease.lost;
  const labels = config.labels ? new LabelSession(config.labels.tracker, subject, [...config.labels.current], (e) => store.append([e])) : undefined;
  let first: F | undefined;
  try {
    first = (await config.first?.()) as F;
    // The ceilings hold over the subject's whole life (docs/issue.md): checked before the run spends anything.
    const spent = await lifetimeUsage(store, subject);
    const { maxCalls } = config.ceilings;
    const maxUsd = config.ceilings.maxUsd ?? null;
    const maxCycles = config.ceilings.maxCycles ?? null;
    const words = config.words ?? { name: `issue ${subject}`, over: "over its planning cycles", again: "plan the issue again" };
    checkCeilings(words, maxCycles !== null ? await store.plan(subject) : undefined, spent, { maxCalls, maxUsd, maxCycles });
    config.ceiling?.(first);
    const budget = callBudget(maxCalls, spent.calls, maxUsd ? { max: maxUsd, spent: spent.usd } : undefined);
    // Every call of the run is metered where it is made, in the door: failed ones too.
    const meter = new Meter();
    const callCtx: CallContext = { ...config.calls, issueId: subject, budget, signal, meter: (r: CallRecord) => meter.record(r) };
    const door = doorOf({ ...callCtx, emit: (e) => store.append([e]).then(() => undefined) });
    const costOf: CostOf = (meta, request) => networkCalls(meta, request, callCtx);
    const append = (events: NewEvent[]) => store.append(events);
    const run: IssueRun = { subject, signal, spent, budget, meter, door, costOf, append, ...(labels ? { labels } : {}) };
    return await body(run as LabelledRun, first); // the overloads give a body `labels` only when the configuration names them
  } catch (e) {
    // A lost lease aborts the calls (and an agent) with its own error: report that, not an interruption.
    const lost = lease.lost.aborted && DissentError.isInstance(lease.lost.reason) && !isFatal(e);
    if (!lost) await config.onError?.(e, { first, ...(labels ? { labels } : {}) });
    if (lost) throw lease.lost.reason;
    throw e;
  } finally {
    await labels?.release(config.warn ?? (() => undefined));
    await lease.release().catch(() => undefined);
  }
}

/** What an issue has spent over its whole life: network calls, and the dollars of those with a known price. */
export interface LifetimeUsage {
  calls: number;
  usd: number;
}

/** An issue's network calls over all its cycles, from its ModelCall events (cache hits are free). */
async function lifetimeUsage(store: Store, issueId: string): Promise<LifetimeUsage> {
  const events: DissentEvent[] = await store.events({ issueId, types: ["ModelCall"] });
  const calls = events.filter(countsCall);
  return { calls: calls.length, usd: roundUsd(calls.reduce((n, e) => n + (e.cost_usd ?? 0), 0)) };
}

/** How a ceiling's refusal names what it refuses. */
export interface CeilingWords {
  /** `issue 12`, `pull request #7`. */
  name: string;
  /** `over its planning cycles`, `over its reviews`. */
  over: string;
  /** `plan the issue again`. */
  again: string;
}

/** The ceilings of an issue's life (docs/issue.md): null means none. */
interface Ceilings {
  maxCalls: number;
  maxUsd: number | null;
  maxCycles: number | null;
}

/**
 * Refuses to plan an issue past a ceiling of its life (docs/issue.md): every network call of every
 * cycle counts against `budget.max_calls_per_issue` (and dollars against `max_usd_per_issue`); a new
 * cycle beyond `budget.max_cycles_per_issue` is not started (an interrupted cycle still resumes).
 * The error names the setting to raise.
 */
function checkCeilings(w: CeilingWords, row: PlanRow | undefined, spent: LifetimeUsage, c: Ceilings): void {
  const resuming = row?.status === "planning";
  const cycles = row?.cycle ?? 0;
  if (!resuming && c.maxCycles !== null && cycles >= c.maxCycles) {
    throw new BudgetExceeded(
      `${w.name} has had ${cycles} planning cycle${cycles === 1 ? "" : "s"}, the most budget.max_cycles_per_issue (${c.maxCycles}) allows; raise it to ${w.again}`,
      { max: c.maxCycles, used: cycles, unit: "cycles", setting: "budget.max_cycles_per_issue" },
    );
  }
  if (spent.calls >= c.maxCalls) {
    throw new BudgetExceeded(
      `${w.name} has used ${spent.calls} network calls ${w.over}, the most budget.max_calls_per_issue (${c.maxCalls}) allows; raise it to ${w.again}`,
      { max: c.maxCalls, used: spent.calls, unit: "calls", setting: "budget.max_calls_per_issue" },
    );
  }
  if (c.maxUsd !== null && spent.usd >= c.maxUsd) {
    throw new BudgetExceeded(
      `${w.name} has spent $${spent.usd.toFixed(4)} ${w.over}, the most budget.max_usd_per_issue ($${c.maxUsd}) allows; raise it to ${w.again}`,
      { max: c.maxUsd, used: spent.usd, unit: "usd", setting: "budget.max_usd_per_issue" },
    );
  }
}

/**
 * An issue's labels during one run: moves through the transition table, the transient
 * label of the phase running, and a LabelChanged event for each change. The transient label is
 * removed on every exit — error, Ctrl-C and SIGTERM included (ADR-0064).
 */
export class LabelSession {
  private held: TransientLabel | undefined;

  constructor(
    private readonly tracker: Tracker,
    private readonly issueId: string,
    private current: string[],
    private readonly record: (event: NewEvent) => Promise<unknown>,
  ) {}

  get labels(): string[] {
    return this.current;
  }

  private async change(change: { add: readonly string[]; remove: readonly string[] }): Promise<void> {
    const add = change.add.filter((l) => !this.current.includes(l));
    const remove = change.remove.filter((l) => this.current.includes(l));
    if (!add.length && !remove.length) return;
    this.current = await this.tracker.setLabels(this.issueId, { add, remove });
    await this.record({ type: "LabelChanged", issue_id: this.issueId, added: add, removed: remove, labels: this.current });
  }

  /** Moves to a state label; an illegal move throws before anything changes. */
  moveTo(to: StateLabel): Promise<void> {
    return this.change(transition(this.current, to, this.issueId));
  }

  /** Clears transient labels left behind by a run that was killed (or whose lease expired). */
  clearStale(): Promise<void> {
    return this.change({ add: [], remove: TRANSIENT_LABELS });
  }

  /** Puts the phase's transient label on, taking the previous one off. */
  async hold(label: TransientLabel): Promise<void> {
    if (this.held === label) return;
    if (this.held) await this.change({ add: [], remove: [this.held] });
    await this.change({ add: [label], remove: [] });
    this.held = label;
  }

  /** Takes the transient label off (best effort on the way out: a failure is a warning, never hides the run's own error). */
  async release(warn?: (message: string) => void): Promise<void> {
    const held = this.held;
    if (!held) return;
    try {
      await this.change({ add: [], remove: [held] });
      this.held = undefined;
    } catch (e) {
      if (!warn) throw e;
      warn(`could not remove label ${held} from issue ${this.issueId}: ${messageOf(e)} (the next \`dissent issue plan ${this.issueId}\` clears it)`);
    }
  }
}
