/**
 * Traces of `issue implement` (docs/implement.md): a `dissent.issue_implement` workflow span, one
 * span per agent attempt with its outcome, exit codes and diff as attributes, and a chat span per
 * review call — exported over OTLP/HTTP to a local receiver.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { implementWorld, type ImplementWorld } from "../support/implement-world.js";
import { startReceiver, type Receiver } from "./receiver.js";

vi.setConfig({ testTimeout: 180_000 });

let w: ImplementWorld | undefined;
let r: Receiver | undefined;
afterEach(async () => {
  await w?.close();
  await r?.close();
});

/** The ModelCall events of an issue so far. */
async function modelCalls(world: ImplementWorld, id: string): Promise<number> {
  const events = await world.run(["events", "--issue", id, "--json"]);
  expect(events.code, events.stderr).toBe(0);
  return events.stdout
    .split("\n")
    .filter(Boolean)
    .filter((l) => (JSON.parse(l) as { type: string }).type === "ModelCall").length;
}

describe("traces of issue implement", () => {
  it("a workflow span, a span per attempt with what it did, and a chat span per review call, in one trace", async () => {
    r = await startReceiver();
    w = await implementWorld({ mode: "bug-then-fix", extra: `telemetry: { otlp_endpoint: "${r.url}", service_name: dissent-test }` });
    const id = await w.readyIssue();
    const before = w.double.requests.length;
    const callsBefore = await modelCalls(w, id);
    const done = await w.run(["issue", "implement", id, "--json"]);
    expect(done.code, done.stderr).toBe(0);
    const spans = r.spans();
    const root = spans.find((s) => s.name === "invoke_workflow dissent.issue_implement");
    expect(root?.attrs).toMatchObject({ "dissent.issue.id": id, "dissent.plan.status": "review", "dissent.implement.attempts": 2 });
    const mine = spans.filter((s) => s.traceId === root?.traceId);
    const attempts = mine.filter((s) => s.name.startsWith("attempt ")).sort((a, b) => a.name.localeCompare(b.name));
    expect(attempts.map((s) => [s.name, s.attrs["dissent.implement.outcome"], s.attrs["dissent.implement.test.exit_code"]])).toEqual([
      ["attempt 1", "tested", 1],
      ["attempt 2", "tested", 0],
    ]);
    for (const a of attempts) {
      expect(a.parentSpanId).toBe(root?.spanId);
      expect(a.attrs["dissent.implement.diff.files"]).toBe(1);
    }
    // One chat span per review call, each with the HTTP requests it made: a reply the double cut off
    // (its truncate quirk, drawn per request — and the review's request names the agent's run time,
    // so which request is cut varies run to run) is retried inside its call, one span with attempts 2.
    // The double's request count is the sum of the attempts, never simply the number of spans.
    const chats = mine.filter((s) => s.name.startsWith("chat "));
    const tries = chats.map((c) => c.attrs["dissent.attempts"]);
    for (const a of tries) expect(a).toBeGreaterThanOrEqual(1);
    expect(tries.reduce((n: number, a) => n + Number(a), 0)).toBe(w.double.requests.length - before);
    // …and the spans are the calls the run recorded: its ModelCall events, one for one.
    expect(chats).toHaveLength((await modelCalls(w, id)) - callsBefore);
    expect(new Set(chats.map((c) => c.attrs["gen_ai.request.model"]))).toEqual(
      new Set([
        "review.correctness",
        "review.tests",
        "review.security",
        "review.acceptance",
        ...(chats.some((c) => c.attrs["gen_ai.request.model"] === "verifier") ? ["verifier"] : []),
      ]),
    );
  });
});
