import { afterEach, describe, expect, it } from "vitest";
import { startOpenAIServer, type FakeOpenAI } from "../support/openai-server.js";
import { audit, byRole, closedPort, configYaml, errorLine, EXEC_MODEL, parseJsonOut, requestsOf, world, type World } from "../support/e2e.js";

const PROMPT = "Name a prime number.";
const DRAFT = "Seven is a prime number.";

let w: World | undefined;
let backup: FakeOpenAI | undefined;
afterEach(async () => {
  await w?.close();
  await backup?.close();
  w = undefined;
  backup = undefined;
});

describe("secondary fallback (docs/configuration.md)", () => {
  it("uses the secondary when the primary is unreachable (closed port), and records route secondary", async () => {
    backup = await startOpenAIServer(byRole({ executor: { content: DRAFT }, challenger: { content: audit("pass") } }));
    const dead = `http://127.0.0.1:${await closedPort()}/v1`;
    const secondaryUrl = backup.url;
    w = await world(
      () => ({ content: "unused" }),
      () => configYaml({ url: dead, secondaryUrl }),
    );
    const r = await w.run(["run", "--audit", "--json", PROMPT]);
    const out = parseJsonOut(r);
    expect(out.final_output).toBe(DRAFT);
    expect(out.audit_meta.challenger_status).toBe("ok");
    expect(out.run.calls.map((c) => [c.role, c.provider, c.route])).toEqual([
      ["executor", "backup", "secondary"],
      ["challenger", "backup", "secondary"],
    ]);
    expect(backup.requests).toHaveLength(2);
  });

  it("uses the secondary when the primary answers 5xx after its retries (3 requests to the primary)", async () => {
    backup = await startOpenAIServer(byRole({ executor: { content: DRAFT } }));
    const secondaryUrl = backup.url;
    w = await world(byRole({ executor: { status: 503 } }), { secondaryUrl });
    const r = await w.run(["run", "--json", PROMPT]);
    const out = parseJsonOut(r);
    expect(out.final_output).toBe(DRAFT);
    expect(out.run.calls).toEqual([expect.objectContaining({ role: "executor", provider: "backup", model: EXEC_MODEL, route: "secondary" })]);
    expect(w.server.requests).toHaveLength(3);
    expect(backup.requests).toHaveLength(1);
  });

  it("uses the secondary when the primary times out on every attempt", async () => {
    backup = await startOpenAIServer(byRole({ executor: { content: DRAFT } }));
    const secondaryUrl = backup.url;
    w = await world(byRole({ executor: { delayMs: 3_000, content: "too late" } }), { secondaryUrl, callTimeoutMs: 300 });
    const out = parseJsonOut(await w.run(["run", "--json", PROMPT]));
    expect(out.final_output).toBe(DRAFT);
    expect(out.run.calls[0]?.route).toBe("secondary");
  });

  it("does not use the secondary when the primary answers (even with a 4xx)", async () => {
    backup = await startOpenAIServer(byRole({ executor: { content: DRAFT } }));
    const secondaryUrl = backup.url;
    w = await world(byRole({ executor: { status: 400 } }), { secondaryUrl });
    const r = await w.run(["run", PROMPT]);
    expect(r.code).toBe(1);
    expect(errorLine(r)).toContain("'local'");
    expect(backup.requests).toHaveLength(0);
  });
});

describe("executor failures (docs/errors.md)", () => {
  it("executor unreachable with no secondary: exit 1, one error line naming the provider, nothing on stdout", async () => {
    const dead = `http://127.0.0.1:${await closedPort()}/v1`;
    w = await world(
      () => ({ content: "unused" }),
      () => configYaml({ url: dead }),
    );
    const r = await w.run(["run", "--audit", PROMPT]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    const line = errorLine(r);
    expect(line).toContain("'local'");
    expect(line).not.toMatch(/\bat .*\.js:\d+/);
  });

  it("executor unreachable on primary and secondary: exit 1", async () => {
    const dead1 = `http://127.0.0.1:${await closedPort()}/v1`;
    const dead2 = `http://127.0.0.1:${await closedPort()}/v1`;
    w = await world(
      () => ({ content: "unused" }),
      () => configYaml({ url: dead1, secondaryUrl: dead2 }),
    );
    const r = await w.run(["run", PROMPT]);
    expect(r.code).toBe(1);
    expect(errorLine(r)).toContain("'backup'");
  });

  it("executor answering 500 on every attempt: exit 1 after exactly 3 requests", async () => {
    w = await world(byRole({ executor: { status: 500 } }));
    const r = await w.run(["run", PROMPT]);
    expect(r.code).toBe(1);
    expect(errorLine(r)).toContain("'local'");
    expect(w.server.requests).toHaveLength(3);
  });

  it("--verbose adds the stack trace to the error", async () => {
    w = await world(byRole({ executor: { status: 500 } }));
    const r = await w.run(["run", "--verbose", PROMPT]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^dissent: error: /m);
    expect(r.stderr.split("\n").filter(Boolean).length).toBeGreaterThan(1);
  });
});

describe("retries (docs/configuration.md)", () => {
  it("a 5xx then success costs one retry and succeeds", async () => {
    w = await world(byRole({ executor: (_req, n) => (n === 0 ? { status: 502 } : { content: DRAFT }) }));
    const r = await w.run(["run", PROMPT]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${DRAFT}\n`);
    expect(w.server.requests).toHaveLength(2);
  });

  it("a dropped connection is retried", async () => {
    w = await world(byRole({ executor: (_req, n) => (n === 0 ? { destroy: true } : { content: DRAFT }) }));
    const r = await w.run(["run", PROMPT]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${DRAFT}\n`);
  });

  it("a 429 with Retry-After is retried no sooner than the server asked", async () => {
    const arrivals: number[] = [];
    w = await world(
      byRole({
        executor: (_req, n) => {
          arrivals.push(Date.now());
          return n === 0 ? { status: 429, headers: { "retry-after": "1" } } : { content: DRAFT };
        },
      }),
    );
    const r = await w.run(["run", PROMPT]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${DRAFT}\n`);
    expect(arrivals).toHaveLength(2);
    // retry_backoff_ms is 10 in this config: only Retry-After explains a wait of a second.
    expect((arrivals[1] ?? 0) - (arrivals[0] ?? 0)).toBeGreaterThanOrEqual(950);
  });

  it("a retried call is still one call in run.calls", async () => {
    w = await world(byRole({ executor: (_req, n) => (n < 2 ? { status: 500 } : { content: DRAFT }), challenger: { content: audit("pass") } }));
    const out = parseJsonOut(await w.run(["run", "--audit", "--json", PROMPT]));
    expect(out.run.calls.map((c) => c.role)).toEqual(["executor", "challenger"]);
    expect(out.audit_meta.audit_passes).toBe(1);
    expect(requestsOf(w.server, "executor")).toHaveLength(3);
  });
});
