/**
 * How attempts are numbered over an issue's life (issue 33 item 6, docs/implement.md): from the
 * event log, in a real SQLite store.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { NewEvent } from "../../src/contracts/events.js";
import { readLedger } from "../../src/implement/ledger.js";
import { sqliteHome, type SqliteHome } from "../support/sqlite-home.js";

let h: SqliteHome | undefined;
afterEach(async () => {
  await h?.cleanup();
  h = undefined;
});

const started = (run: number, attempt: number): NewEvent => ({ type: "ImplementAttemptStarted", issue_id: "1", run, attempt, branch: "dissent/issue-1" });
const recorded = (run: number, attempt: number): NewEvent =>
  ({
    type: "ImplementAttempt",
    issue_id: "1",
    run,
    attempt,
    branch: "dissent/issue-1",
    base_sha: "a".repeat(40),
    commit: "b".repeat(40),
    outcome: "tested",
    agent: { exit_code: 0, signal: null, timed_out: false, duration_ms: 10, output_tail: "", output_bytes: 0 },
    diff: { files: 1, insertions: 1, deletions: 0 },
    test: null,
  }) as NewEvent;
const opened = (run: number): NewEvent => ({
  type: "PullRequestOpened",
  issue_id: "1",
  run,
  where: "store",
  branch: "dissent/issue-1",
  number: null,
  url: null,
  draft: false,
  updated: false,
  body_chars: 10,
});

async function ledgerAfter(events: NewEvent[]) {
  h = await sqliteHome();
  await h.store.append(events);
  return readLedger(h.store, "1");
}

describe("attempt numbers over the issue's life", () => {
  it("a new run goes on from the last run's attempts", async () => {
    const l = await ledgerAfter([started(1, 1), recorded(1, 1), started(1, 2), recorded(1, 2), opened(1)]);
    expect(l).toMatchObject({ run: 2, resuming: false, attemptsBefore: 2 });
  });

  it("a run resumed after a kill keeps its numbers; one that died mid-attempt is not numbered over", async () => {
    const resumed = await ledgerAfter([started(1, 1), recorded(1, 1), opened(1), started(2, 2), recorded(2, 2), started(2, 3)]);
    expect(resumed).toMatchObject({ run: 2, resuming: true, attemptsBefore: 1 });
    expect([...resumed.recorded.keys()]).toEqual([2]);
    await h?.cleanup();
    // Run 1 started attempt 2 and failed for good before recording it: run 2 starts at 3, not at 2 again.
    const failed = await ledgerAfter([
      started(1, 1),
      recorded(1, 1),
      started(1, 2),
      { type: "ImplementFailed", issue_id: "1", run: 1, cycle: 1, attempt: 2, error: "x", retry_at: null, final: true } as NewEvent,
    ]);
    expect(failed).toMatchObject({ run: 2, attemptsBefore: 2 });
  });

  it("a store that numbered attempts per run: a new run counts them all; a resumed old run keeps its own numbers", async () => {
    const fresh = await ledgerAfter([started(1, 1), recorded(1, 1), recorded(1, 2), opened(1), started(2, 1), recorded(2, 1), opened(2)]);
    expect(fresh).toMatchObject({ run: 3, attemptsBefore: 3 });
    await h?.cleanup();
    const old = await ledgerAfter([started(1, 1), recorded(1, 1), opened(1), started(2, 1)]);
    expect(old).toMatchObject({ run: 2, resuming: true, attemptsBefore: 0 });
  });
});
