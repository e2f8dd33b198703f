import { afterEach, describe, expect, it } from "vitest";
import { CHAL_MODEL, EXEC_MODEL, byRole, errorLine, filesUnder, parseJsonOut, requestsOf, world, type RunJson, type World } from "../support/e2e.js";
import { pipelineWorld, type PipelineWorld } from "../support/pipeline-e2e.js";

/**
 * What dissent sends (docs/configuration.md): per-provider `max_tokens`, `headers` (with `${VAR}`
 * secrets), `extra_body` and `max_concurrency`; and what `run --json` shows of an audit (§3 r2).
 */

const PROMPT = "Name a prime number.";
const DRAFT = "Seven is a prime number.";
const REVISED = "Seven is a prime number: its only divisors are one and seven.";
const NEEDS_WORK = JSON.stringify({
  concerns: [{ category: "unverifiable_claim", severity: "medium", evidence: "Seven is a prime number", concern: "Say why seven is prime." }],
  verdict: "needs_work",
});

let w: World | undefined;
let p: PipelineWorld | undefined;
afterEach(async () => {
  await w?.close();
  await p?.close();
  w = undefined;
  p = undefined;
});

/** The gate's config, with `provider` added to the provider `local`. */
function gateConfig(provider: string) {
  return (url: string) =>
    [
      "providers:",
      `  local: { type: openai-compatible, base_url: "${url}", ${provider} }`,
      "routes:",
      `  executor: { primary: "local:${EXEC_MODEL}" }`,
      `  challenger: { primary: "local:${CHAL_MODEL}" }`,
      "seed: 42",
      "call_timeout_ms: 10000",
      "retry_backoff_ms: 10",
      "",
    ].join("\n");
}

describe("per-provider request settings (docs/configuration.md)", () => {
  it("max_tokens: 123 is sent with every request (executor, challenger, revision)", async () => {
    w = await world(
      byRole({ executor: { content: DRAFT }, challenger: { content: NEEDS_WORK }, revision: { content: REVISED } }),
      gateConfig("max_tokens: 123"),
    );
    const r = await w.run(["run", "--audit", PROMPT]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${REVISED}\n`);
    expect(w.server.requests).toHaveLength(3);
    expect(w.server.requests.map((q) => q.body.max_tokens)).toEqual([123, 123, 123]);
  });

  it("extra_body is merged into every request body, beside the usual fields", async () => {
    w = await world(
      byRole({ executor: { content: DRAFT }, challenger: { content: NEEDS_WORK }, revision: { content: REVISED } }),
      gateConfig("extra_body: { options: { num_ctx: 4096 } }"),
    );
    expect((await w.run(["run", "--audit", PROMPT])).code).toBe(0);
    expect(w.server.requests).toHaveLength(3);
    for (const q of w.server.requests) {
      expect(q.body.options).toEqual({ num_ctx: 4096 });
      expect(q.body).toMatchObject({ temperature: 0, seed: 42 });
      expect(q.body.messages.length).toBeGreaterThan(0);
    }
  });

  describe("headers, with a ${VAR} secret", () => {
    const SECRET = "hdr-secret-7f3a9c2e51";
    const HEADERS = 'headers: { X-Team: "a", X-Secret: "${SECRET_HDR}" }';
    const env = { SECRET_HDR: SECRET };

    /** Everything a user or a script could read afterwards: the run's output, the event log and every file under the home. */
    async function expectNowhere(...outputs: string[]) {
      const events = await w!.run(["events", "--json"], { env });
      expect(events.code).toBe(0);
      for (const text of [...outputs, events.stdout, events.stderr]) expect(text).not.toContain(SECRET);
      const leaks = filesUnder(w!.home).filter((f) => f.bytes.includes(SECRET));
      expect(leaks.map((f) => f.path)).toEqual([]);
    }

    it("are sent on every request; the secret never shows, though the executor echoes it and the challenger's error does", async () => {
      w = await world(
        byRole({
          executor: (req) => ({ content: `${DRAFT} (your header said ${String(req.headers["x-secret"])})` }),
          challenger: (req) => ({ status: 500, raw: JSON.stringify({ error: { message: `upstream refused X-Secret ${String(req.headers["x-secret"])}` } }) }),
        }),
        gateConfig(HEADERS),
      );
      const r = await w.run(["run", "--audit", "--json", PROMPT], { env });
      const out = parseJsonOut(r);
      for (const q of w.server.requests) {
        expect(q.headers["x-team"]).toBe("a");
        expect(q.headers["x-secret"]).toBe(SECRET);
      }
      expect(requestsOf(w.server, "challenger")).toHaveLength(3);
      // The echoes reached the sinks (so redaction was needed), without the secret.
      expect(out.final_output).toMatch(/^Seven is a prime number\. \(your header said /);
      expect(out.audit_meta.challenger_status).toBe("failed");
      expect(out.audit_meta.challenger_error).toMatch(/upstream refused/);
      expect(r.stderr).toMatch(/upstream refused/);
      await expectNowhere(r.stdout, r.stderr);
    });

    it("the secret never shows in the one error line of a run the executor's echoing error ends", async () => {
      w = await world(
        byRole({
          executor: (req) => ({ status: 400, raw: JSON.stringify({ error: { message: `bad request from X-Secret ${String(req.headers["x-secret"])}` } }) }),
        }),
        gateConfig(HEADERS),
      );
      const r = await w.run(["run", PROMPT], { env });
      expect(r.code).toBe(1);
      expect(r.stdout).toBe("");
      expect(errorLine(r)).toMatch(/bad request from X-Secret/);
      await expectNowhere(r.stdout, r.stderr);
    });
  });

  it("max_concurrency: 1 against a server that serves one request at a time: never 2 open requests, and no critic times out", async () => {
    // A single local GPU: requests queue at the server, 300 ms each. Four critics sent at once would
    // wait up to 1.2 s there, past call_timeout_ms; queued in dissent instead, each request gets
    // its full 1 s from the moment it is sent (docs/configuration.md: queued time does not count).
    let open = 0;
    let maxOpen = 0;
    let gpu: Promise<void> = Promise.resolve();
    p = await pipelineWorld(
      async () => {
        open++;
        maxOpen = Math.max(maxOpen, open);
        const turn = gpu.then(() => new Promise<void>((r) => setTimeout(r, 300)));
        gpu = turn;
        await turn;
        open--;
        return undefined; // the agreeable council's reply
      },
      { provider: "max_concurrency: 1", extra: "call_timeout_ms: 1000" },
    );
    const id = await p.newIssue("Add retries to the HTTP client", "", ["dissent-load-bearing"]);
    const { out, result } = await p.plan(id);
    expect(maxOpen).toBe(1);
    expect(out.status).toBe("ready");
    expect(out.stages.map((s) => [s.phase, s.outcome, s.critic_failures])).toEqual([
      ["discover", "converged", 0],
      ["shape", "converged", 0],
      ["plan", "converged", 0],
      ["spec", "converged", 0],
    ]);
    // 4 stages (producer + critics: 5, 5, 5, 2) and the reviewer: no request timed out and was sent again.
    expect(p.server.requests).toHaveLength(18);
    expect(out.calls).toBe(18);
    expect(result.stderr).not.toMatch(/timed out|warning/i);
  }, 60_000);
});

describe("run --json shows the grounded concerns (docs/run.md)", () => {
  it("audit.concerns carries category, severity, evidence and concern — no suggested_fix, which the revision never sees; plain stdout shows none of it", async () => {
    const reply = JSON.stringify({
      concerns: [
        {
          evidence: "Seven is a prime number",
          category: "unverifiable_claim",
          severity: "medium",
          concern: "The draft gives no reason why seven is prime.",
          suggested_fix: "Cite the 1859 Riemann paper.",
        },
        { evidence: "Eleven is even", category: "factual_risk", severity: "high", concern: "Not in the draft at all." },
      ],
      verdict: "needs_work",
    });
    w = await world(byRole({ executor: { content: DRAFT }, challenger: { content: reply }, revision: { content: REVISED } }));
    const r = await w.run(["run", "--audit", "--json", PROMPT]);
    const out = parseJsonOut(r) as RunJson & { audit: { concerns: Record<string, unknown>[] } };
    expect(out.final_output).toBe(REVISED);
    expect(out.audit_meta).toMatchObject({ audit_verdict: "needs_work", concerns: 1, ungrounded_concerns: 1 });
    expect(out.audit.concerns).toEqual([
      { category: "unverifiable_claim", severity: "medium", evidence: "Seven is a prime number", concern: "The draft gives no reason why seven is prime." },
    ]);
    const revision = requestsOf(w.server, "revision")[0];
    expect(JSON.stringify(revision?.body.messages)).toContain("The draft gives no reason why seven is prime.");
    expect(JSON.stringify(revision?.body.messages)).not.toContain("Riemann");

    // The same run without --json (from the cache): the final output and one newline, nothing else.
    const plain = await w.run(["run", "--audit", PROMPT]);
    expect(plain.code).toBe(0);
    expect(plain.stdout).toBe(`${REVISED}\n`);
    expect(w.server.requests).toHaveLength(3);
  });
});
