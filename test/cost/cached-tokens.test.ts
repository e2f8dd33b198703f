/**
 * Prompt-cached tokens counted (docs/serve.md "Cost", issue 21): a server reporting OpenAI's
 * `prompt_tokens_details.cached_tokens`, or Anthropic's `cache_read_input_tokens` and
 * `cache_creation_input_tokens`, in their exact wire format, reaches every sink — the call record of
 * `run --json`, the ModelCall event, the StageRun, the total, the trace span, the dashboard's
 * costs — and the dollars use the cached prices. Anthropic requests carry a `cache_control`
 * breakpoint at the end of the shared prefix.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { dissent, scratch, type CliResult } from "../support/cli.js";
import { agreeableReply } from "../support/roles-config.js";
import { ROLES } from "../support/world.js";
import { anthropicJson } from "../support/wire/anthropic.js";
import { openaiJson } from "../support/wire/openai.js";
import { startWireServer, type WireReply, type WireRequest, type WireServer } from "../support/wire/server.js";
import { getJson, serve } from "../serve/world.js";
import { startReceiver, type Receiver } from "../telemetry/receiver.js";

vi.setConfig({ testTimeout: 180_000 });

const KEYS = { OPENAI_API_KEY: "sk-test-openai-0123456789", ANTHROPIC_API_KEY: "sk-ant-test-0123456789" };
/** Per million tokens: fresh input, prompt-cached input, cache writes, output. */
const PRICES = "prices: { input_per_mtok: 3, cached_input_per_mtok: 0.3, cache_write_per_mtok: 3.75, output_per_mtok: 15 }";
const usd = (fresh: number, read: number, write: number, output: number) => Math.round((fresh * 3 + read * 0.3 + write * 3.75 + output * 15) * 1e6) / 1e12;

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const c of open.splice(0)) await c.close();
});

async function world(provider: string, routes: string[], handler: (req: WireRequest, i: number) => WireReply, extra = "") {
  const server: WireServer = await startWireServer(handler);
  const dir = scratch("dissent-cached-");
  open.push({ close: async () => (await server.close(), dir.cleanup()) });
  dir.write(
    "dissent.config.yaml",
    ["providers:", `  p: { ${provider}, base_url: "${server.url}", ${PRICES} }`, "routes:", ...routes, "retry_backoff_ms: 1", extra, ""].join("\n"),
  );
  const home = `${dir.dir}/home`;
  const run = (args: string[]): Promise<CliResult> => dissent(args, { cwd: dir.dir, env: { DISSENT_HOME: home, ...KEYS }, timeoutMs: 150_000 });
  return { server, run, dir: dir.dir, home };
}

interface Call {
  type?: string;
  role: string;
  input_tokens: number;
  output_tokens: number;
  cached_input_tokens?: number;
  cache_write_input_tokens?: number;
  cost_usd: number | null;
}

async function modelCalls(run: (args: string[]) => Promise<CliResult>): Promise<Call[]> {
  const r = await run(["events", "--json"]);
  expect(r.code, r.stderr).toBe(0);
  return r.stdout
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Call)
    .filter((e) => e.type === "ModelCall");
}

describe("OpenAI: prompt_tokens_details.cached_tokens", () => {
  it("run --audit --json: each call record and ModelCall event carries cached_input_tokens; its dollars price them at the cached rate; the span carries gen_ai.usage.cache_read.input_tokens", async () => {
    const receiver: Receiver = await startReceiver();
    open.push(receiver);
    const w = await world(
      "type: openai",
      ['  executor: { primary: "p:gpt-4.1" }', '  challenger: { primary: "p:gpt-4.1-mini" }'],
      (req) =>
        req.body?.model === "gpt-4.1"
          ? openaiJson("gpt-4.1-2025-04-14", "Paris is the capital of France.", { prompt: 2048, completion: 40, reasoning: 0, cached: 1920 })
          : openaiJson("gpt-4.1-mini-2025-04-14", '{"concerns": [], "verdict": "pass"}', { prompt: 1500, completion: 12, reasoning: 0, cached: 1024 }),
      `telemetry: { otlp_endpoint: "${receiver.url}", service_name: dissent-test }`,
    );
    const r = await w.run(["run", "--audit", "--json", "What is the capital of France?"]);
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { run: { calls: Call[]; cost_usd: number } };
    const [executor, challenger] = out.run.calls;
    expect(executor).toMatchObject({ role: "executor", input_tokens: 2048, cached_input_tokens: 1920, output_tokens: 40 });
    expect(challenger).toMatchObject({ role: "challenger", input_tokens: 1500, cached_input_tokens: 1024, output_tokens: 12 });
    expect(executor?.cost_usd).toBeCloseTo(usd(128, 1920, 0, 40), 6);
    expect(challenger?.cost_usd).toBeCloseTo(usd(476, 1024, 0, 12), 6);
    // Priced without the discount, the same call costs more: the cached rate is what was used.
    expect(executor?.cost_usd).toBeLessThan(usd(2048, 0, 0, 40));

    const events = await modelCalls(w.run);
    expect(events.map((e) => [e.role, e.cached_input_tokens])).toEqual([
      ["executor", 1920],
      ["challenger", 1024],
    ]);

    const chats = receiver.spans().filter((s) => s.name.startsWith("chat "));
    expect(chats.map((s) => s.attrs["gen_ai.usage.cache_read.input_tokens"]).sort()).toEqual([1024, 1920]);
  });
});

describe("Anthropic: cache_read_input_tokens and cache_creation_input_tokens", () => {
  it("issue plan: requests carry a cache_control breakpoint where the shared prefix ends; reads and writes reach the events, the StageRuns, the issue's total, the spans and the dashboard, priced at their rates", async () => {
    const receiver: Receiver = await startReceiver();
    open.push(receiver);
    // Anthropic's input_tokens leave out what the cache read or wrote: 300 fresh, 1,800 read, 200 written.
    const w = await world(
      "type: anthropic",
      ROLES.map((role) => `  ${role}: { primary: "p:${role}" }`),
      (req) => anthropicJson(String(req.body?.model), agreeableReply(String(req.body?.model)), { input: 300, output: 50, cacheRead: 1800, cacheWrite: 200 }),
      `telemetry: { otlp_endpoint: "${receiver.url}", service_name: dissent-test }`,
    );
    const created = await w.run([
      "issue",
      "new",
      "--title",
      "Retry 503s in the HTTP client",
      "--body",
      "Batch jobs fail on a brief upstream blip.",
      "--label",
      "dissent-load-bearing",
    ]);
    expect(created.code, created.stderr).toBe(0);
    const id = created.stdout.trim();
    const planned = await w.run(["issue", "plan", id, "--json"]);
    expect(planned.code, planned.stderr).toBe(0);

    // The breakpoint: a critic's first user message is two text parts, the first (the shared blocks) marked.
    const critic = w.server.requests.find((q) => q.body?.model === "discovery.problem_sharpener");
    const content = (critic?.body?.messages as { role: string; content: { type: string; text: string; cache_control?: unknown }[] }[])[0]?.content;
    expect(content?.map((p) => p.cache_control ?? null)).toEqual([{ type: "ephemeral" }, null]);
    expect(content?.[0]?.text).toContain('<data kind="under_review"');
    expect(content?.[1]?.text).toMatch(/^Role: discovery\.problem_sharpener\n/);

    const calls = await modelCalls(w.run);
    expect(calls.length).toBeGreaterThan(10);
    for (const c of calls) {
      expect(c).toMatchObject({ input_tokens: 2300, cached_input_tokens: 1800, cache_write_input_tokens: 200, output_tokens: 50 });
      expect(c.cost_usd).toBeCloseTo(usd(300, 1800, 200, 50), 6);
    }

    const plan = JSON.parse(planned.stdout) as { calls: number; stages: (Call & { calls: number })[] };
    for (const s of plan.stages) expect(s).toMatchObject({ cached_input_tokens: 1800 * s.calls, cache_write_input_tokens: 200 * s.calls });
    const shown = await w.run(["issue", "show", id, "--json"]);
    expect(shown.code, shown.stderr).toBe(0);
    expect(JSON.parse(shown.stdout)).toMatchObject({
      input_tokens: 2300 * plan.calls,
      cached_input_tokens: 1800 * plan.calls,
      cache_write_input_tokens: 200 * plan.calls,
    });

    const chats = receiver.spans().filter((s) => s.name.startsWith("chat "));
    expect(chats).toHaveLength(calls.length);
    for (const s of chats) expect(s.attrs).toMatchObject({ "gen_ai.usage.cache_read.input_tokens": 1800, "gen_ai.usage.cache_creation.input_tokens": 200 });
    const stageSpans = receiver.spans().filter((s) => s.name.startsWith("stage "));
    expect(stageSpans.length).toBeGreaterThan(0);
    for (const s of stageSpans) expect(Number(s.attrs["gen_ai.usage.cache_read.input_tokens"])).toBeGreaterThan(0);

    const s = await serve({ dir: w.dir, home: w.home });
    open.push({ close: async () => void (await s.stop()) });
    const stats = await getJson<{ totals: { calls: number; input_tokens: number; cached_input_tokens: number; cache_write_input_tokens: number } }>(
      s.url,
      "/api/stats",
    );
    expect(stats.body.totals).toMatchObject({
      input_tokens: 2300 * plan.calls,
      cached_input_tokens: 1800 * plan.calls,
      cache_write_input_tokens: 200 * plan.calls,
    });
  });
});
