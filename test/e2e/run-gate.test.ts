import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { audit, byRole, CHAL_MODEL, EXEC_MODEL, parseJsonOut, requestsOf, world, type World } from "../support/e2e.js";

const PROMPT = "How tall is the Eiffel Tower?";
const DRAFT = "The Eiffel Tower is 330 m tall.\n\n  It was built in 1889 and is made of cheese. ✓  ";
const REVISED = "The Eiffel Tower is 330 m tall. It was built in 1889 of wrought iron.";
const cheese = { category: "factual_risk", severity: "high", evidence: "is made of cheese", concern: "CRITIQUE: the tower is iron, not cheese." };
const invented = { category: "unverifiable_claim", severity: "medium", evidence: "painted gold every year", concern: "Not in the draft." };

let w: World | undefined;
afterEach(async () => {
  await w?.close();
  w = undefined;
});

describe("dissent run: without --audit", () => {
  it("prints the executor's draft followed by one newline, after one request", async () => {
    w = await world(byRole({ executor: { content: DRAFT } }));
    const r = await w.run(["run", PROMPT]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${DRAFT}\n`);
    expect(r.stderr).toBe("");
    expect(w.server.requests).toHaveLength(1);
    expect(w.server.requests[0]?.body.messages.at(-1)).toEqual({ role: "user", content: PROMPT });
  });

  it("--json: audit not used, verdict null, challenger skipped", async () => {
    w = await world(byRole({ executor: { content: DRAFT, usage: { prompt_tokens: 123, completion_tokens: 45 } } }));
    const out = parseJsonOut(await w.run(["run", "--json", PROMPT]));
    expect(out.final_output).toBe(DRAFT);
    expect(out.audit_meta).toEqual({
      audit_used: false,
      audit_verdict: null,
      revised: false,
      audit_passes: 0,
      revision_passes: 0,
      challenger_status: "skipped",
      concerns: 0,
      ungrounded_concerns: 0,
      invalid_concerns: 0,
    });
    expect(out.run.run_id).toMatch(/\S/);
    expect(out.run.calls).toHaveLength(1);
    expect(out.run.calls[0]).toMatchObject({
      role: "executor",
      provider: "local",
      model: EXEC_MODEL,
      route: "primary",
      cached: false,
      input_tokens: 123,
      output_tokens: 45,
    });
  });
});

describe("dissent run --verbose", () => {
  it("lists each model call on stderr and leaves stdout alone", async () => {
    w = await world(byRole({ executor: { content: DRAFT }, challenger: { content: audit("pass") } }));
    const r = await w.run(["run", "--audit", "--verbose", PROMPT]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${DRAFT}\n`);
    const lines = r.stderr.split("\n").filter(Boolean);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toContain(`local:${EXEC_MODEL}`);
    expect(lines[1]).toContain(`local:${CHAL_MODEL}`);
  });
});

describe("dissent run --audit: pass", () => {
  it("returns the draft byte-for-byte: stdout is exactly draft + newline, 2 requests", async () => {
    w = await world(byRole({ executor: { content: DRAFT }, challenger: { content: audit("pass") } }));
    const r = await w.run(["run", "--audit", PROMPT]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${DRAFT}\n`);
    expect(r.stderr).toBe("");
    expect(w.server.requests.map((q) => q.body.model)).toEqual([EXEC_MODEL, CHAL_MODEL]);
  });

  it("--json reports the pass", async () => {
    w = await world(byRole({ executor: { content: DRAFT }, challenger: { content: audit("pass") } }));
    const out = parseJsonOut(await w.run(["run", "--audit", "--json", PROMPT]));
    expect(out.final_output).toBe(DRAFT);
    expect(out.audit_meta).toEqual({
      audit_used: true,
      audit_verdict: "pass",
      revised: false,
      audit_passes: 1,
      revision_passes: 0,
      challenger_status: "ok",
      concerns: 0,
      ungrounded_concerns: 0,
      invalid_concerns: 0,
    });
    expect(out.run.calls.map((c) => [c.role, c.model])).toEqual([
      ["executor", EXEC_MODEL],
      ["challenger", CHAL_MODEL],
    ]);
  });
});

describe("dissent run --audit: needs_work", () => {
  it("revises once: 3 requests, the revision is final, the critique never shows", async () => {
    w = await world(byRole({ executor: { content: DRAFT }, challenger: { content: audit("needs_work", [cheese]) }, revision: { content: REVISED } }));
    const r = await w.run(["run", "--audit", PROMPT]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${REVISED}\n`);
    expect(r.stdout).not.toContain("CRITIQUE");
    expect(w.server.requests).toHaveLength(3);
    const revision = requestsOf(w.server, "revision")[0];
    const executor = requestsOf(w.server, "executor")[0];
    expect(revision?.body.model).toBe(EXEC_MODEL);
    // The executor's conversation is the revision's prefix; the draft and the critique come after it.
    expect(revision?.body.messages.slice(0, executor?.body.messages.length)).toEqual(executor?.body.messages);
    const after = revision?.body.messages.slice(executor?.body.messages.length ?? 0) ?? [];
    expect(after.map((m) => m.role)).toEqual(["assistant", "user"]);
    expect(after[0]?.content).toBe(DRAFT);
    expect(after[1]?.content).toContain(cheese.concern);
  });

  it("--json reports the revision", async () => {
    w = await world(byRole({ executor: { content: DRAFT }, challenger: { content: audit("needs_work", [cheese, invented]) }, revision: { content: REVISED } }));
    const out = parseJsonOut(await w.run(["run", "--audit", "--json", PROMPT]));
    expect(out.final_output).toBe(REVISED);
    expect(out.audit_meta).toEqual({
      audit_used: true,
      audit_verdict: "needs_work",
      revised: true,
      audit_passes: 1,
      revision_passes: 1,
      challenger_status: "ok",
      concerns: 1,
      ungrounded_concerns: 1,
      invalid_concerns: 0,
      revision_drift: [],
    });
    expect(out.run.calls.map((c) => c.role)).toEqual(["executor", "challenger", "revision"]);
    expect(out.run.calls[2]).toMatchObject({ provider: "local", model: EXEC_MODEL, route: "primary" });
    // Only the grounded concern is handed to the revision.
    const critique = requestsOf(w.server, "revision")[0]?.body.messages.at(-1)?.content ?? "";
    expect(critique).toContain(cheese.concern);
    expect(critique).not.toContain(invented.concern);
  });

  it("accepts a fenced challenger reply", async () => {
    const fenced = "Here is my audit.\n\n```json\n" + JSON.stringify({ verdict: "needs_work", concerns: [cheese] }, null, 2) + "\n```\n";
    w = await world(byRole({ executor: { content: DRAFT }, challenger: { content: fenced }, revision: { content: REVISED } }));
    const out = parseJsonOut(await w.run(["run", "--audit", "--json", PROMPT]));
    expect(out.final_output).toBe(REVISED);
    expect(out.audit_meta).toMatchObject({ challenger_status: "ok", audit_verdict: "needs_work", concerns: 1 });
  });

  it("accepts a challenger reply with a <think> block holding a different verdict", async () => {
    const thinking = `<think>\nMaybe ${audit("pass")}? No: the cheese claim is wrong.\n</think>\n${audit("needs_work", [cheese])}`;
    w = await world(byRole({ executor: { content: DRAFT }, challenger: { content: thinking }, revision: { content: REVISED } }));
    const out = parseJsonOut(await w.run(["run", "--audit", "--json", PROMPT]));
    expect(out.final_output).toBe(REVISED);
    expect(out.audit_meta).toMatchObject({ challenger_status: "ok", audit_verdict: "needs_work", revised: true });
  });

  it("needs_work whose evidence is not in the draft is a pass: draft unchanged, ungrounded counted, 2 requests", async () => {
    w = await world(byRole({ executor: { content: DRAFT }, challenger: { content: audit("needs_work", [invented]) }, revision: { content: REVISED } }));
    const out = parseJsonOut(await w.run(["run", "--audit", "--json", PROMPT]));
    expect(out.final_output).toBe(DRAFT);
    expect(out.audit_meta).toMatchObject({
      audit_verdict: "pass",
      revised: false,
      revision_passes: 0,
      concerns: 0,
      ungrounded_concerns: 1,
      challenger_status: "ok",
    });
    expect(w.server.requests).toHaveLength(2);
  });
});

describe("dissent run --audit: revision drift (docs/run.md)", () => {
  // The revision "corrects" the date with one the executor was never given, and names a source: ADR-008 §5 forbids both.
  const GILDED = "The Eiffel Tower is 330 m tall. It was finished in 1887 by Gustave Eiffel's firm, of wrought iron.";

  it("stdout is exactly the revision; stderr is one warning line naming what the revision added", async () => {
    w = await world(byRole({ executor: { content: DRAFT }, challenger: { content: audit("needs_work", [cheese]) }, revision: { content: GILDED } }));
    const r = await w.run(["run", "--audit", PROMPT]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${GILDED}\n`);
    expect(r.stderr).toMatch(/^dissent: warning: the revision added facts [^\n]*: 1887, Gustave Eiffel's [^\n]*\n$/);
  });

  it("--json lists them in audit_meta.revision_drift; a clean revision lists none and warns of nothing", async () => {
    w = await world(byRole({ executor: { content: DRAFT }, challenger: { content: audit("needs_work", [cheese]) }, revision: { content: GILDED } }));
    const out = parseJsonOut(await w.run(["run", "--audit", "--json", PROMPT]));
    expect(out.audit_meta.revision_drift).toEqual([
      { kind: "number", text: "1887" },
      { kind: "name", text: "Gustave Eiffel's" },
    ]);
    await w.close();
    w = await world(byRole({ executor: { content: DRAFT }, challenger: { content: audit("needs_work", [cheese]) }, revision: { content: REVISED } }));
    const clean = await w.run(["run", "--audit", "--json", PROMPT]);
    expect(parseJsonOut(clean).audit_meta.revision_drift).toEqual([]);
    expect(clean.stderr).toBe("");
  });
});

describe("dissent run --audit on the real model's replies (test/fixtures/real-model)", () => {
  interface Real {
    challenges: { id: string; input: { prompt: string; executor_output: string; constraints: string[] }; reply: string }[];
    revisions: { id: string; reply: string }[];
  }
  const real = JSON.parse(readFileSync(new URL("../fixtures/real-model/gate.json", import.meta.url), "utf8")) as Real;
  const recorded = (id: string) => {
    const c = real.challenges.find((x) => x.id === id);
    if (!c) throw new Error(`no recorded challenge for ${id}`);
    return { c, revision: real.revisions.find((r) => r.id === id)?.reply };
  };

  it("code-003: the challenger's only quote, `import requests`, grounds — the draft is revised, not passed", async () => {
    const { c } = recorded("code-003");
    const fixed = "Use urllib.request from the standard library instead (a revision the recording has none of).";
    w = await world(byRole({ executor: { content: c.input.executor_output }, challenger: { content: c.reply }, revision: { content: fixed } }));
    const out = parseJsonOut(await w.run(["run", "--audit", "--json", "--constraint", c.input.constraints[0] ?? "", c.input.prompt]));
    expect(out.audit_meta).toMatchObject({ audit_verdict: "needs_work", concerns: 1, ungrounded_concerns: 0, revised: true });
    expect(out.final_output).toBe(fixed);
  });

  it("cook-003: the revision that 'corrects' 145 °F to 165 °F (74 °C) is printed, with one warning line naming 165 and 74", async () => {
    const { c, revision } = recorded("cook-003");
    w = await world(byRole({ executor: { content: c.input.executor_output }, challenger: { content: c.reply }, revision: { content: revision ?? "" } }));
    const r = await w.run(["run", "--audit", c.input.prompt]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${revision}\n`);
    expect(r.stdout).toContain("165 °F (74 °C)");
    expect(r.stderr).toMatch(/^dissent: warning: the revision added facts [^\n]*: 165, 74 [^\n]*\n$/);
  });
});

describe("dissent run --audit: the challenger failing returns the draft, exit 0, with one warning line", () => {
  const cases: [string, Parameters<typeof byRole>[0]["challenger"], RegExp, number][] = [
    ["answers 500 (after its retries)", { status: 500 }, /500|failed/, 3],
    ["replies with garbage", { content: "Looks good to me, ship it!" }, /JSON/, 1],
    ["replies with the wrong schema", { content: '{"verdict": "approve", "comments": []}' }, /verdict/, 1],
    ["drops the connection", { destroy: true }, /\S/, 3],
  ];

  it.each(cases)("challenger %s", async (_name, challenger, errorPattern, challengerRequests) => {
    w = await world(byRole({ executor: { content: DRAFT }, challenger, revision: { content: REVISED } }));
    const r = await w.run(["run", "--audit", "--json", PROMPT]);
    expect(r.code).toBe(0);
    const out = parseJsonOut(r);
    expect(out.final_output).toBe(DRAFT);
    expect(out.audit_meta).toMatchObject({
      audit_used: true,
      audit_verdict: null,
      revised: false,
      audit_passes: 1,
      revision_passes: 0,
      challenger_status: "failed",
    });
    expect(out.audit_meta.challenger_error).toMatch(errorPattern);
    expect(requestsOf(w.server, "challenger")).toHaveLength(challengerRequests);
    expect(requestsOf(w.server, "revision")).toHaveLength(0);
    expect(r.stderr).toMatch(/^dissent: warning: [^\n]*challenger[^\n]*\n$/);
  });

  it("challenger times out on every attempt (call_timeout_ms bounds each)", async () => {
    w = await world(byRole({ executor: { content: DRAFT }, challenger: { delayMs: 3_000, content: audit("pass") } }), { callTimeoutMs: 300 });
    const r = await w.run(["run", "--audit", "--json", PROMPT]);
    const out = parseJsonOut(r);
    expect(out.final_output).toBe(DRAFT);
    expect(out.audit_meta).toMatchObject({ challenger_status: "failed", audit_verdict: null });
    expect(out.audit_meta.challenger_error).toMatch(/timed out/);
    expect(requestsOf(w.server, "challenger")).toHaveLength(3);
    expect(r.stderr).toMatch(/^dissent: warning: [^\n]*\n$/);
  });

  it("plain stdout is still exactly the draft", async () => {
    w = await world(byRole({ executor: { content: DRAFT }, challenger: { content: "no JSON here" } }));
    const r = await w.run(["run", "--audit", PROMPT]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${DRAFT}\n`);
    expect(r.stderr.split("\n").filter(Boolean)).toHaveLength(1);
    expect(r.stderr).toMatch(/^dissent: warning: /);
  });
});

describe("dissent run: what the models are sent", () => {
  it("every request carries temperature 0 and the configured seed, and no tools", async () => {
    w = await world(byRole({ executor: { content: DRAFT }, challenger: { content: audit("needs_work", [cheese]) }, revision: { content: REVISED } }), {
      seed: 1234,
    });
    expect((await w.run(["run", "--audit", PROMPT])).code).toBe(0);
    expect(w.server.requests).toHaveLength(3);
    for (const req of w.server.requests) {
      expect(req.body.temperature).toBe(0);
      expect(req.body.seed).toBe(1234);
      expect(req.body).not.toHaveProperty("tools");
      expect(req.body).not.toHaveProperty("tool_choice");
    }
  });

  it("the challenger request asks for JSON with response_format", async () => {
    w = await world(byRole({ executor: { content: DRAFT }, challenger: { content: audit("pass") } }));
    expect((await w.run(["run", "--audit", PROMPT])).code).toBe(0);
    const format = requestsOf(w.server, "challenger")[0]?.body.response_format;
    expect(format?.type).toBe("json_schema");
    expect(JSON.stringify(format?.json_schema)).toContain("verdict");
  });

  it("with structured_outputs: false the challenger request asks for a json_object", async () => {
    w = await world(byRole({ executor: { content: DRAFT }, challenger: { content: audit("pass") } }), (url) =>
      [
        "providers:",
        `  local: { type: openai-compatible, base_url: "${url}", structured_outputs: false }`,
        "routes:",
        `  executor: { primary: "local:${EXEC_MODEL}" }`,
        `  challenger: { primary: "local:${CHAL_MODEL}" }`,
        "retry_backoff_ms: 10",
        "",
      ].join("\n"),
    );
    expect((await w.run(["run", "--audit", PROMPT])).code).toBe(0);
    expect(requestsOf(w.server, "challenger")[0]?.body.response_format?.type).toBe("json_object");
  });

  it("the challenger is given exactly {prompt, executor_output, constraints, policies}", async () => {
    w = await world(byRole({ executor: { content: DRAFT }, challenger: { content: audit("pass") } }), {
      extra: 'constraints: ["Answer in under 200 words."]\npolicies: ["No medical dosing advice."]\n',
    });
    expect((await w.run(["run", "--audit", PROMPT])).code).toBe(0);
    const messages = requestsOf(w.server, "challenger")[0]?.body.messages ?? [];
    expect(messages.map((m) => m.role)).toEqual(["system", "user"]);
    expect(JSON.parse(messages[1]?.content ?? "")).toEqual({
      prompt: PROMPT,
      executor_output: DRAFT,
      constraints: ["Answer in under 200 words."],
      policies: ["No medical dosing advice."],
    });
  });

  it("--constraint and --policy (text or file) add to the config's lists and reach the executor and the challenger", async () => {
    w = await world(byRole({ executor: { content: DRAFT }, challenger: { content: audit("pass") } }), {
      extra: 'constraints: ["From config."]\npolicies: ["Config policy."]\n',
    });
    w.write("policy.md", "Never name a competitor.\n");
    const r = await w.run([
      "run",
      "--audit",
      "--constraint",
      "Use metric units.",
      "--constraint",
      "Be brief.",
      "--policy",
      "policy.md",
      "--policy",
      "Be polite.",
      PROMPT,
    ]);
    expect(r.code).toBe(0);
    const system = requestsOf(w.server, "executor")[0]?.body.messages[0];
    expect(system?.role).toBe("system");
    for (const text of ["From config.", "Use metric units.", "Be brief.", "Config policy.", "Never name a competitor.", "Be polite."]) {
      expect(system?.content).toContain(text);
    }
    const input = JSON.parse(requestsOf(w.server, "challenger")[0]?.body.messages[1]?.content ?? "") as { constraints: string[]; policies: string[] };
    expect(input.constraints).toEqual(["From config.", "Use metric units.", "Be brief."]);
    expect(input.policies).toEqual(["Config policy.", "Never name a competitor.", "Be polite."]);
  });

  it("policies named as files in the config are read relative to the config's folder", async () => {
    w = await world(byRole({ executor: { content: DRAFT }, challenger: { content: audit("pass") } }));
    const { mkdirSync, readFileSync } = await import("node:fs");
    mkdirSync(`${w.dir}/conf`);
    w.write("conf/rules.md", "Only answer about Paris.\n");
    w.write("conf/dissent.yaml", `${readFileSync(`${w.dir}/dissent.config.yaml`, "utf8")}policies: ["rules.md"]\n`);
    const r = await w.run(["run", "--audit", "--config", "conf/dissent.yaml", PROMPT]);
    expect(r.code).toBe(0);
    const input = JSON.parse(requestsOf(w.server, "challenger")[0]?.body.messages[1]?.content ?? "") as { policies: string[] };
    expect(input.policies).toEqual(["Only answer about Paris."]);
  });
});

describe("dissent run: streamed (SSE) replies", () => {
  it("accepts SSE answers from the executor, the challenger and the revision", async () => {
    w = await world(
      byRole({
        executor: { content: DRAFT, sse: true, usage: { prompt_tokens: 21, completion_tokens: 9 } },
        challenger: { content: audit("needs_work", [cheese]), sse: true },
        revision: { content: REVISED, sse: true },
      }),
    );
    const out = parseJsonOut(await w.run(["run", "--audit", "--json", PROMPT]));
    expect(out.final_output).toBe(REVISED);
    expect(out.audit_meta).toMatchObject({ challenger_status: "ok", audit_verdict: "needs_work", revised: true });
    expect(out.run.calls[0]).toMatchObject({ input_tokens: 21, output_tokens: 9 });
  });

  it("an SSE pass returns the draft byte-for-byte", async () => {
    w = await world(byRole({ executor: { content: DRAFT, sse: true }, challenger: { content: audit("pass"), sse: true } }));
    const r = await w.run(["run", "--audit", PROMPT]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${DRAFT}\n`);
  });
});
