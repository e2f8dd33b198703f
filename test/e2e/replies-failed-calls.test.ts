import { afterEach, describe, expect, it } from "vitest";
import { startOpenAIServer, type FakeOpenAI, type Reply } from "../support/openai-server.js";
import { byRole, errorLine, parseJsonOut, requestsOf, world, type World } from "../support/e2e.js";
import { fileURLToPath } from "node:url";

/** Preload that slows the AI SDK's first load (see the file). */
const SLOW_SDK = fileURLToPath(new URL("../support/slow-sdk.mjs", import.meta.url));

/**
 * Issue #9, reply defects 7, 8 and 21, and the failed challenger call in `run.calls`: a reply that
 * is cut off, empty or only reasoning is a failed call — retried, never cached, never printed
 * (docs/configuration.md); a reset mid-body is a transport failure; `call_timeout_ms` bounds the request.
 */

const PROMPT = "Name a prime number.";
const DRAFT = "Seven is a prime number, and so is eleven.";

let w: World | undefined;
let backup: FakeOpenAI | undefined;
afterEach(async () => {
  await w?.close();
  await backup?.close();
  w = undefined;
  backup = undefined;
});

/** A world whose executor answers `state.reply` as it is at the time (so a test can mend the server between runs). */
async function executorWorld(first: Reply, opts: Parameters<typeof world>[1] = {}) {
  const state = { reply: first };
  w = await world(byRole({ executor: () => state.reply }), opts);
  return state;
}

/** A run that failed as docs/errors.md says: exit 1, nothing on stdout, one `dissent: error:` line naming the provider. */
function expectFailedRun(r: Awaited<ReturnType<World["run"]>>): string {
  expect(r.code).toBe(1);
  expect(r.stdout).toBe("");
  const line = errorLine(r);
  expect(line).toContain("'local'");
  return line;
}

describe("#9.7 cut-off, reasoning-only and empty replies are failed calls", () => {
  it("an SSE stream cut off mid-way prints no half draft, is retried (3 requests), and is never cached", async () => {
    const state = await executorWorld({ content: "Seven is a prime num", sse: true, cutStream: true });
    expectFailedRun(await w!.run(["run", PROMPT]));
    expect(requestsOf(w!.server, "executor")).toHaveLength(3);

    // Nothing was cached: --replay misses, and the next run asks the server again.
    const replay = await w!.run(["run", "--replay", PROMPT]);
    expect(replay.code).toBe(1);
    expect(replay.stdout).toBe("");
    state.reply = { content: DRAFT, sse: true };
    const mended = await w!.run(["run", PROMPT]);
    expect(mended.code).toBe(0);
    expect(mended.stdout).toBe(`${DRAFT}\n`);
    expect(requestsOf(w!.server, "executor")).toHaveLength(4);
  });

  it("a stream cut off once, then whole: the whole draft is printed, never the half", async () => {
    w = await world(byRole({ executor: (_req, n) => (n === 0 ? { content: DRAFT.slice(0, 20), sse: true, cutStream: true } : { content: DRAFT, sse: true }) }));
    const r = await w.run(["run", PROMPT]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${DRAFT}\n`);
    expect(requestsOf(w.server, "executor")).toHaveLength(2);
  });

  it("finish_reason length: the error names max_tokens; nothing printed, nothing cached", async () => {
    const state = await executorWorld({ content: "Seven is a pri", finishReason: "length" });
    const line = expectFailedRun(await w!.run(["run", PROMPT]));
    expect(line).toMatch(/max_tokens/);
    expect(requestsOf(w!.server, "executor")).toHaveLength(3);
    state.reply = { content: DRAFT };
    expect((await w!.run(["run", PROMPT])).stdout).toBe(`${DRAFT}\n`);
    expect(requestsOf(w!.server, "executor")).toHaveLength(4);
  });

  it("a <think> that never closes is reasoning, not an answer: failed call after 3 requests, nothing printed", async () => {
    await executorWorld({ content: "<think>The user wants a prime. Seven is one, so the answer is" });
    expectFailedRun(await w!.run(["run", PROMPT]));
    expect(requestsOf(w!.server, "executor")).toHaveLength(3);
  });

  it("text before a lone </think> is reasoning: only what follows it is printed", async () => {
    w = await world(byRole({ executor: { content: `The user wants a prime. Eleven works too.</think>\n\n${DRAFT}` } }));
    const r = await w.run(["run", PROMPT]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${DRAFT}\n`);
  });

  it("reasoning before a lone </think> and nothing after it: a failed call, not an empty answer", async () => {
    await executorWorld({ content: "The user wants a prime. Seven works.</think>\n" });
    expectFailedRun(await w!.run(["run", PROMPT]));
    expect(requestsOf(w!.server, "executor")).toHaveLength(3);
  });

  it("an empty reply is a failed call: retried (3 requests), exit 1, and never cached (a second run asks again)", async () => {
    await executorWorld({ content: "" });
    expectFailedRun(await w!.run(["run", PROMPT]));
    expect(requestsOf(w!.server, "executor")).toHaveLength(3);
    expectFailedRun(await w!.run(["run", PROMPT]));
    expect(requestsOf(w!.server, "executor")).toHaveLength(6);
  });

  it("an empty reply, then a real one: the real one is printed and cached", async () => {
    w = await world(byRole({ executor: (_req, n) => (n === 0 ? { content: "" } : { content: DRAFT }) }));
    expect((await w.run(["run", PROMPT])).stdout).toBe(`${DRAFT}\n`);
    expect((await w.run(["run", PROMPT])).stdout).toBe(`${DRAFT}\n`);
    expect(requestsOf(w.server, "executor")).toHaveLength(2);
  });
});

describe("#9.8 a connection reset mid-body is a transport failure", () => {
  it("is retried: the draft is printed after 2 requests", async () => {
    w = await world(byRole({ executor: (_req, n) => (n === 0 ? { content: DRAFT, resetAfterBytes: 60 } : { content: DRAFT }) }));
    const r = await w.run(["run", PROMPT]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${DRAFT}\n`);
    expect(requestsOf(w.server, "executor")).toHaveLength(2);
  });

  it("falls back to the secondary when every attempt on the primary is reset (route secondary recorded)", async () => {
    backup = await startOpenAIServer(byRole({ executor: { content: DRAFT } }));
    const secondaryUrl = backup.url;
    w = await world(byRole({ executor: { content: DRAFT, resetAfterBytes: 60 } }), { secondaryUrl });
    const out = parseJsonOut(await w.run(["run", "--json", PROMPT]));
    expect(out.final_output).toBe(DRAFT);
    expect(out.run.calls).toEqual([expect.objectContaining({ role: "executor", provider: "backup", route: "secondary" })]);
    expect(requestsOf(w.server, "executor")).toHaveLength(3);
    expect(backup.requests).toHaveLength(1);
  });
});

describe("#9.21 call_timeout_ms bounds the request, not module loading", () => {
  it("an SDK that takes longer to load than call_timeout_ms: the instant server is asked exactly once per run, in one attempt", async () => {
    // Each run is a fresh process that loads the SDK on its first call; the hook makes that load take
    // 2.5 s, longer than the 1.5 s call_timeout_ms. A timer started before loading would time out first.
    w = await world(byRole({ executor: { content: DRAFT } }), { callTimeoutMs: 1_500 });
    const env = { NODE_OPTIONS: `--import ${SLOW_SDK}`, DISSENT_TEST_SLOW_SDK_MS: "2500" };
    for (const args of [
      ["run", PROMPT],
      ["run", "--no-cache", PROMPT],
    ]) {
      const r = await w.run(args, { env });
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
      expect(r.stdout).toBe(`${DRAFT}\n`);
    }
    expect(w.server.requests).toHaveLength(2);
    // An attempt that timed out before it reached the server is not seen there: the ModelCall events count them.
    const events = (await w.run(["events", "--json"])).stdout
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { type: string; attempts?: number });
    expect(events.filter((e) => e.type === "ModelCall").map((e) => e.attempts)).toEqual([1, 1]);
  });
});

describe("run.calls lists a failed challenger call (docs/run.md)", () => {
  it("a challenger answering 500 on every attempt: fail-open, and its call is in run.calls with an error", async () => {
    w = await world(byRole({ executor: { content: DRAFT }, challenger: { status: 500 } }));
    const r = await w.run(["run", "--audit", "--json", PROMPT]);
    const out = parseJsonOut(r) as ReturnType<typeof parseJsonOut> & { run: { calls: { error?: string }[] } };
    expect(out.final_output).toBe(DRAFT);
    expect(out.audit_meta).toMatchObject({ challenger_status: "failed", audit_verdict: null, audit_passes: 1, revision_passes: 0 });
    expect(out.run.calls.map((c) => c.role)).toEqual(["executor", "challenger"]);
    expect(out.run.calls[0]?.error).toBeUndefined();
    expect(out.run.calls[1]).toMatchObject({ role: "challenger", provider: "local", model: "chal-model", cached: false, error: expect.any(String) });
    expect(out.run.calls[1]?.error).not.toBe("");
    expect(requestsOf(w.server, "challenger")).toHaveLength(3);
    expect(r.stderr.split("\n").filter(Boolean)).toEqual([expect.stringMatching(/challenger/)]);
  });
});
