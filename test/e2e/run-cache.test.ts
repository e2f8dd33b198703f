import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startOpenAIServer, type FakeOpenAI } from "../support/openai-server.js";
import { audit, byRole, errorLine, parseJsonOut, requestsOf, world, type World } from "../support/e2e.js";

const PROMPT = "Summarise the water cycle.";
const DRAFT = "Water evaporates, condenses into clouds, and falls as rain.\n  (It is all made of cheese.)";
const REVISED = "Water evaporates, condenses into clouds, and falls as rain.";
const cheese = { category: "factual_risk", severity: "high", evidence: "It is all made of cheese.", concern: "Water is not cheese." };

let w: World | undefined;
let backup: FakeOpenAI | undefined;
afterEach(async () => {
  await w?.close();
  await backup?.close();
  w = undefined;
  backup = undefined;
});

/** A server whose every reply differs from the last, so a network call cannot pass for a cached one. */
function changing() {
  return byRole({
    executor: (_q, n) => ({ content: n === 0 ? DRAFT : `${DRAFT} (call ${n})` }),
    challenger: (_q, n) => ({ content: n === 0 ? audit("needs_work", [cheese]) : audit("pass") }),
    revision: (_q, n) => ({ content: n === 0 ? REVISED : `${REVISED} (call ${n})` }),
  });
}

describe("reply cache (docs/run.md determinism)", () => {
  it("an identical second run makes no request and prints the same bytes", async () => {
    w = await world(changing());
    const first = await w.run(["run", "--audit", PROMPT]);
    expect(first.code).toBe(0);
    expect(first.stdout).toBe(`${REVISED}\n`);
    expect(w.server.requests).toHaveLength(3);
    const second = await w.run(["run", "--audit", PROMPT]);
    expect(second.code).toBe(0);
    expect(second.stdout).toBe(first.stdout);
    expect(w.server.requests).toHaveLength(3);
    expect(existsSync(join(w.home, "dissent.db"))).toBe(true);
  });

  it("--json: same final_output and audit_meta; every call marked cached", async () => {
    w = await world(changing());
    const first = parseJsonOut(await w.run(["run", "--audit", "--json", PROMPT]));
    const second = parseJsonOut(await w.run(["run", "--audit", "--json", PROMPT]));
    expect(w.server.requests).toHaveLength(3);
    expect(second.final_output).toBe(first.final_output);
    expect(second.audit_meta).toEqual(first.audit_meta);
    expect(first.run.calls.map((c) => c.cached)).toEqual([false, false, false]);
    expect(second.run.calls.map((c) => c.cached)).toEqual([true, true, true]);
    expect(second.run.calls.map((c) => [c.role, c.provider, c.model, c.route])).toEqual(first.run.calls.map((c) => [c.role, c.provider, c.model, c.route]));
    expect(second.run.run_id).not.toBe(first.run.run_id);
  });

  it("a different prompt, constraint or policy is not a hit", async () => {
    w = await world(changing());
    await w.run(["run", PROMPT]);
    await w.run(["run", `${PROMPT}!`]);
    await w.run(["run", "--constraint", "Be brief.", PROMPT]);
    await w.run(["run", "--policy", "No jokes.", PROMPT]);
    expect(w.server.requests).toHaveLength(4);
  });

  it("an unparseable challenger reply is cached as received: the second run fails open the same way, without a request", async () => {
    w = await world(byRole({ executor: { content: DRAFT }, challenger: (_q, n) => ({ content: n === 0 ? "I cannot comply." : audit("pass") }) }));
    const first = parseJsonOut(await w.run(["run", "--audit", "--json", PROMPT]));
    const second = await w.run(["run", "--audit", "--json", PROMPT]);
    expect(w.server.requests).toHaveLength(2);
    expect(parseJsonOut(second).audit_meta).toEqual(first.audit_meta);
    expect(first.audit_meta.challenger_status).toBe("failed");
    expect(second.stderr).toMatch(/^dissent: warning: /);
  });

  it("a transport failure is never cached: the next run asks again", async () => {
    w = await world(byRole({ executor: { content: DRAFT }, challenger: (_q, n) => (n < 3 ? { status: 500 } : { content: audit("pass") }) }));
    const first = parseJsonOut(await w.run(["run", "--audit", "--json", PROMPT]));
    expect(first.audit_meta.challenger_status).toBe("failed");
    const second = parseJsonOut(await w.run(["run", "--audit", "--json", PROMPT]));
    expect(second.audit_meta).toMatchObject({ challenger_status: "ok", audit_verdict: "pass" });
    expect(requestsOf(w.server, "challenger")).toHaveLength(4);
    expect(requestsOf(w.server, "executor")).toHaveLength(1);
  });

  it("a run whose primary is down and secondary answered is reused without asking the primary again", async () => {
    backup = await startOpenAIServer(byRole({ executor: { content: DRAFT } }));
    const secondaryUrl = backup.url;
    w = await world(byRole({ executor: { status: 500 } }), { secondaryUrl });
    const first = await w.run(["run", PROMPT]);
    expect(first.code).toBe(0);
    const primaryRequests = w.server.requests.length;
    const second = await w.run(["run", PROMPT]);
    expect(second.stdout).toBe(first.stdout);
    expect(backup.requests).toHaveLength(1);
    expect(w.server.requests).toHaveLength(primaryRequests);
  });
});

describe("--no-cache", () => {
  it("makes the requests again, and the new reply replaces the cached one (docs/run.md)", async () => {
    w = await world(changing());
    await w.run(["run", PROMPT]);
    const fresh = await w.run(["run", "--no-cache", PROMPT]);
    expect(fresh.code).toBe(0);
    expect(w.server.requests).toHaveLength(2);
    expect(fresh.stdout).toBe(`${DRAFT} (call 1)\n`);
    const cached = await w.run(["run", PROMPT]);
    expect(cached.stdout).toBe(fresh.stdout);
    expect(w.server.requests).toHaveLength(2);
  });

  it("--json marks the calls as not cached", async () => {
    w = await world(changing());
    await w.run(["run", "--audit", PROMPT]);
    const out = parseJsonOut(await w.run(["run", "--audit", "--json", "--no-cache", PROMPT]));
    expect(out.run.calls.every((c) => !c.cached)).toBe(true);
    expect(w.server.requests.length).toBeGreaterThan(3);
  });
});

describe("--replay", () => {
  it("a hit answers from the cache without any request, same stdout bytes", async () => {
    w = await world(changing());
    const first = await w.run(["run", "--audit", PROMPT]);
    const replay = await w.run(["run", "--audit", "--replay", PROMPT]);
    expect(replay.code).toBe(0);
    expect(replay.stdout).toBe(first.stdout);
    expect(replay.stderr).toBe("");
    expect(w.server.requests).toHaveLength(3);
  });

  it("a miss fails with exit 1 and one error line, without any request", async () => {
    w = await world(changing());
    const r = await w.run(["run", "--audit", "--replay", PROMPT]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(errorLine(r)).toMatch(/replay/);
    expect(w.server.requests).toHaveLength(0);
  });

  it("a miss at the challenger is a replay miss (exit 1), not a fail-open", async () => {
    w = await world(changing());
    expect((await w.run(["run", PROMPT])).code).toBe(0);
    const r = await w.run(["run", "--audit", "--replay", PROMPT]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(errorLine(r)).toMatch(/replay/);
    expect(w.server.requests).toHaveLength(1);
  });

  it("a miss never touches the network even when the server is gone", async () => {
    w = await world(changing());
    await w.server.close();
    const r = await w.run(["run", "--replay", PROMPT]);
    expect(r.code).toBe(1);
    expect(errorLine(r)).toMatch(/replay/);
  });

  it.each([
    ["extra_body", "extra_body: { options: { num_ctx: 2048 } }", "extra_body: { options: { num_ctx: 8192 } }"],
    ["headers", 'headers: { X-Variant: "fast" }', 'headers: { X-Variant: "careful" }'],
  ])("two routes to one endpoint and model that differ only in %s do not share a cached reply (issue 32)", async (_what, a, b) => {
    // The server answers by what the request carried: a reply cached for one route is wrong for the other.
    const cw = await world(
      (req) => ({ content: `sent ${JSON.stringify(req.body.options ?? null)} with ${String(req.headers["x-variant"] ?? "no variant")}` }),
      (url) =>
        [
          "providers:",
          `  a: { type: openai-compatible, base_url: "${url}", ${a} }`,
          `  b: { type: openai-compatible, base_url: "${url}", ${b} }`,
          "routes:",
          '  executor: { primary: "a:exec-model" }',
          "seed: 42",
        ].join("\n"),
    );
    w = cw;
    const routeTo = (provider: "a" | "b") =>
      cw.write(
        "dissent.config.yaml",
        readFileSync(join(cw.dir, "dissent.config.yaml"), "utf8").replace(
          /executor: \{ primary: "[ab]:exec-model" \}/,
          `executor: { primary: "${provider}:exec-model" }`,
        ),
      );
    const first = await cw.run(["run", PROMPT]);
    expect(first.code, first.stderr).toBe(0);
    routeTo("b");
    const second = await cw.run(["run", PROMPT]);
    expect(second.code, second.stderr).toBe(0);
    expect(cw.server.requests).toHaveLength(2); // b's request was sent, not answered from a's cache
    expect(second.stdout).not.toBe(first.stdout);
    routeTo("a");
    const third = await cw.run(["run", PROMPT]);
    expect(third.stdout).toBe(first.stdout); // a's own reply is still cached
    expect(cw.server.requests).toHaveLength(2);
  });
});
