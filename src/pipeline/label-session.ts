import { TRANSIENT_LABELS, transition, type StateLabel, type TransientLabel } from "../contracts/labels.js";
import type { NewEvent } from "../contracts/events.js";
import { messageOf } from "../errors.js";
import type { Tracker } from "../trackers/port.js";

/**
 * An issue's labels during one planning run: moves through the transition table, the transient
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
