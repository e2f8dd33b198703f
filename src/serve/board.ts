import { listIssues, type IssueSummary } from "../read-models.js";
import type { Store } from "../store/port.js";
import type { Tracker } from "../trackers/port.js";

interface Copy {
  /** The hub's last `seq` when the read started: the rows are at least as new. */
  seq: number;
  at: number;
  rows: Promise<IssueSummary[]>;
  /** The answer, serialised once per copy (a board of a thousand issues is read far more often than it moves). */
  body?: string;
}

/**
 * The board's rows, read again only when the log has moved (or the copy is older than `maxAgeMs`:
 * a tracker such as GitHub changes without an event). Concurrent requests share one read.
 */
export class BoardCache {
  private copy: Copy | undefined;

  constructor(
    private readonly store: Store,
    private readonly tracker: Tracker,
    private readonly lastSeq: () => number,
    private readonly maxAgeMs: number,
    /** Whether an issue's current cycle had a call of unknown price (its dollars are then null). */
    private readonly unpriced: (issueId: string) => boolean,
  ) {}

  /** `GET /api/issues`'s body: `{issues, last_seq}`, serialised by `serialize` once per copy. */
  async body(serialize: (value: { issues: IssueSummary[]; last_seq: number }) => string): Promise<string> {
    const copy = this.current();
    const rows = await copy.rows;
    copy.body ??= serialize({ issues: rows, last_seq: copy.seq });
    return copy.body;
  }

  private current(): Copy {
    const seq = this.lastSeq();
    const now = Date.now();
    if (this.copy && this.copy.seq === seq && now - this.copy.at <= this.maxAgeMs) return this.copy;
    const copy: Copy = { seq, at: now, rows: listIssues(this.store, this.tracker, this.unpriced) };
    this.copy = copy;
    // A failed read is not kept: the next request tries again.
    copy.rows.catch(() => {
      if (this.copy === copy) this.copy = undefined;
    });
    return copy;
  }
}
