/**
 * The issue-run kernel (ADR-038) as a configuration with no labels and no planning cycles — the
 * shape of a pull request's review: what `issue plan` and `issue implement` get from it, the lease,
 * the ceilings, the budget, the meter, the one door and a lost lease's own error, without an issue's
 * labels or stages.
 */
import { hostname } from "node:os";
import { afterEach, describe, expect, it } from "vitest";
import { BudgetExceeded, LeaseHeld, ReplyFormatError, RunError } from "../../src/errors.js";
import type { CallContext, ModelRequest, ModelTarget } from "../../src/models/types.js";
import { runIssue } from "../../src/pipeline/issue-run.js";
import { holderId, holdLease } from "../../src/pipeline/lease.js";
import type { Store } from "../../src/store/port.js";
import { scriptedModel } from "../support/mock-model.js";
import { BACKENDS, type Backend } from "../support/store-backends.js";

const REQUEST: ModelRequest = { system: "You review diffs.", messages: [{ role: "user", content: "Review this diff." }] };
const SUBJECT = "pr-12";
const other = () => ({ id: holderId(), host: hostname(), pid: process.pid });

/** The door's configuration over one scripted model (the library's own test model). */
function calls(answers: Parameters<typeof scriptedModel>[1]): CallContext {
  const model = scriptedModel("reviewer", answers);
  const target: ModelTarget = {
    provider: "local",
    model: model.modelId,
    route: "primary",
    endpoint: "openai-compatible http://local.test/v1",
    structured: "json_schema",
    cost: async () => null,
    load: async () => model,
  };
  return { router: () => ({ primary: target }), cacheMode: "bypass", seed: 1, timeoutMs: 5_000, maxRetries: 0, backoffMs: 1 };
}

const sqlite = BACKENDS.find(([name]) => name === "sqlite")?.[1] as () => Backend;

describe("runIssue: a run with no labels and no cycles (a pull request's review)", () => {
  let b: Backend;
  let store: Store;
  afterEach(async () => {
    await b.cleanup();
  });

  it("holds the subject's lease while its body runs, meters and budgets every call against the subject's life, moves no label, and lets the lease go", async () => {
    b = sqlite();
    store = await b.open();
    const first = await runIssue({ store, subject: SUBJECT, calls: calls(["looks fine"]), ceilings: { maxCalls: 3 } }, async (run) => {
      expect(run.labels).toBeUndefined();
      await expect(holdLease(store, SUBJECT, other())).rejects.toSatisfy((e) => LeaseHeld.isInstance(e));
      const reply = await run.door({ role: "review.correctness" }, REQUEST);
      return { answer: reply.answer, calls: run.meter.now().calls, used: run.budget.used() };
    });
    expect(first).toEqual({ answer: "looks fine", calls: 1, used: 1 });
    const recorded = await store.events({ issueId: SUBJECT, types: ["ModelCall"] });
    expect(recorded.map((e) => e.type === "ModelCall" && e.role)).toEqual(["review.correctness"]);

    // The next run starts from what the subject's life has spent; the lease was let go.
    const left = await runIssue({ store, subject: SUBJECT, calls: calls(["again"]), ceilings: { maxCalls: 3 } }, async (run) => [
      run.spent.calls,
      run.budget.remaining(),
    ]);
    expect(left).toEqual([1, 2]);
    await (await holdLease(store, SUBJECT, other())).release();
  });

  it("a ceiling of the subject's life refuses the run before its body (after `first`), tells onError, and lets the lease go", async () => {
    b = sqlite();
    store = await b.open();
    await runIssue({ store, subject: SUBJECT, calls: calls(["one"]), ceilings: { maxCalls: 5 } }, (run) => run.door({ role: "review.correctness" }, REQUEST));
    const seen: string[] = [];
    const refused = await runIssue(
      {
        store,
        subject: SUBJECT,
        calls: calls(["never asked"]),
        ceilings: { maxCalls: 1 },
        first: async () => void seen.push("first"),
        onError: async (e) => void seen.push(BudgetExceeded.isInstance(e) ? `onError ${e.setting}` : "onError ?"),
      },
      async () => void seen.push("body"),
    ).catch((e: unknown) => e);
    expect(BudgetExceeded.isInstance(refused) && refused.setting).toBe("budget.max_calls_per_issue");
    expect(seen).toEqual(["first", "onError budget.max_calls_per_issue"]);
    await (await holdLease(store, SUBJECT, other())).release();
  });

  it("a lease another dissent takes over stops the run's calls and is reported as its own error, not the failure it caused; onError is not told", async () => {
    b = sqlite();
    store = await b.open();
    let told = false;
    let asked: () => void = () => undefined;
    const inFlight = new Promise<void>((resolve) => {
      asked = resolve;
    });
    const hang = (o: { abortSignal?: AbortSignal }) =>
      new Promise<string>((_resolve, reject) => {
        o.abortSignal?.addEventListener("abort", () => reject(o.abortSignal?.reason), { once: true });
        asked();
      });
    const me = other();
    const run = runIssue(
      {
        store,
        subject: SUBJECT,
        calls: calls([hang]),
        ceilings: { maxCalls: 3 },
        holder: me,
        lease: { renewMs: 20 },
        onError: async () => {
          told = true;
        },
      },
      async ({ door }) => {
        // The call is cut off when the lease goes; the body then fails in a way of its own, as a stage would.
        await door({ role: "review.correctness" }, REQUEST).catch(() => undefined);
        throw new ReplyFormatError("the reviewer's reply was cut off");
      },
    );
    // While the call is in flight another dissent takes the lease over (as from a holder it judged dead); this one's next renewal finds it gone.
    await inFlight;
    expect(await store.lease.acquire(SUBJECT, other(), 60_000, me.id)).toMatchObject({ ok: true });
    const e = await run.catch((err: unknown) => err);
    expect(RunError.isInstance(e) && e.message).toMatch(/lease on issue pr-12 was taken over by another dissent/);
    expect(told).toBe(false);
  });
});
