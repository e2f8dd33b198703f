import type { LanguageModel } from "ai";
import { describe, expect, it } from "vitest";
import { configFromObject } from "../../src/config/load.js";
import { compareReports } from "../../src/eval/compare.js";
import { judgeSameModelWarning, JUDGE_ROLE } from "../../src/eval/judge.js";
import { runPipelineEval } from "../../src/eval/run-pipeline.js";
import type { PipelineItem } from "../../src/eval/schema.js";
import type { LoadedSet } from "../../src/eval/sets.js";
import { memoryCache } from "../../src/models/cache.js";
import { fixedRouter } from "../../src/models/router.js";
import type { CallContext } from "../../src/models/types.js";
import { PIPELINE_ROLES } from "../../src/pipeline/stages.js";
import { readDataBlocks } from "../../src/prompting/data-block.js";
import { messageText, scriptedModel } from "../support/mock-model.js";

const PLAN =
  "# Plan\n\n1. Measure latency before the change.\n2. Add an index on item_tags.tag_id in a migration; the index is added before the deploy.\n3. The plan measures latency again after the deploy.";

const items: PipelineItem[] = [
  {
    id: "p-clean",
    title: "Show the build number in the footer",
    body: "The footer should show the build number from BUILD_ID so support can tell versions apart.",
    gold: { route: "load_bearing", clean: true, plan_must_contain: ["the plan measures latency"], council_must_raise: [] },
  },
  {
    id: "p-cache",
    title: "Add Redis caching to /search",
    body: "Search is slow: p95 2.8 s. Put Redis in front of it. Refunds were duplicated by retries last year.",
    wiki: [
      {
        title: "Webhook retries duplicated refunds",
        concern: "Retries without idempotency keys duplicated refund payments at the provider.",
        severity: "CRITICAL",
        category: "correctness",
      },
    ],
    gold: {
      route: "load_bearing",
      clean: false,
      plan_must_contain: ["an index is added", "a rollback procedure"],
      council_must_raise: ["the cache would mostly miss", "idempotency of retried refunds"],
    },
  },
  {
    id: "p-typo",
    title: "Fix a typo in the README",
    body: "'recieve' should be 'receive'.",
    labels: ["dissent-typo"],
    gold: { route: "trivial", clean: true, plan_must_contain: [], council_must_raise: [] },
  },
];
const set: LoadedSet<PipelineItem> = { name: "test.json", sha256: "0".repeat(64), items, total: items.length };

/** Every prompt each role saw, and how many calls each got. */
function council() {
  const seen = new Map<string, string[]>();
  const models: Record<string, LanguageModel> = {};
  for (const role of [...PIPELINE_ROLES, JUDGE_ROLE]) {
    models[role] = scriptedModel(role, [
      (options) => {
        const prompt = options.prompt.map(messageText).join("\n");
        seen.set(role, [...(seen.get(role) ?? []), prompt]);
        if (role === "complexity_gate") return "LOAD-BEARING";
        if (["discover.brief", "shape.writer"].includes(role)) return `# ${role}\n\nWhat the issue asks, restated.`;
        if (role === "planner") return PLAN;
        if (role === "spec.ac_generator") return JSON.stringify({ acceptance_criteria: ["p95 of /search is under 500 ms"] });
        if (role === "plan.risk_skeptic" && prompt.includes("Redis")) {
          return JSON.stringify({
            findings: [
              {
                evidence: "Add an index on item_tags.tag_id",
                severity: "MEDIUM",
                category: "risk",
                concern: "A cache would mostly miss: most queries are unique.",
              },
            ],
          });
        }
        if (role === JUDGE_ROLE) {
          const blocks = readDataBlocks(prompt);
          const doc = (blocks[0]?.text ?? "").toLowerCase();
          const item = blocks[1]?.text ?? "";
          // Covered when every long word of the checklist entry is in the document.
          const words = item.toLowerCase().match(/[a-z]{5,}/g) ?? [];
          return words.every((w) => doc.includes(w)) ? "YES" : "No.";
        }
        return JSON.stringify({ findings: [] });
      },
    ]);
  }
  return { models, seen };
}

const calls = (models: Record<string, LanguageModel>, cache = memoryCache()): CallContext => ({
  router: fixedRouter(models),
  cache,
  cacheMode: "use",
  seed: 7,
  timeoutMs: 5_000,
  maxRetries: 0,
  backoffMs: 1,
});
const config = { budget: { maxCallsPerIssue: 30, maxUsdPerIssue: null, maxCyclesPerIssue: 3 }, wiki: { maxEntries: 5, maxChars: 2000 } };

describe("eval pipeline over scripted models", () => {
  it("plans each issue in a fresh store, judges the checklists, and reports status, stages and false blocks", async () => {
    const { models, seen } = council();
    const r = await runPipelineEval(set, { calls: calls(models), config });
    const [clean, cache, typo] = r.items;
    expect(r.kind).toBe("dissent.eval.pipeline");
    expect(r.models.judge).toBe(`mock:${JUDGE_ROLE}`);

    expect(clean).toMatchObject({ status: "ready", route: "load_bearing", blocked: false });
    expect(clean?.plan_checklist).toEqual([{ item: "the plan measures latency", covered: true, answer: "YES" }]);
    expect(clean?.stages.map((s) => s.outcome)).toEqual(["converged", "converged", "converged", "converged"]);

    expect(cache?.plan_checklist.map((c) => c.covered)).toEqual([true, false]);
    expect(cache?.council_checklist.map((c) => c.covered)).toEqual([true, false]);
    expect(cache?.findings).toEqual(['[MEDIUM] A cache would mostly miss: most queries are unique. (evidence: "Add an index on item_tags.tag_id")']);

    expect(typo).toMatchObject({ route: "trivial", status: "ready", stages: [] });

    // The wiki entry was loaded into the issue's fresh store and reached the assumption surfacer of that issue only.
    const surfacer = seen.get("assumption_surfacer") ?? [];
    expect(surfacer.some((p) => p.includes("Webhook retries duplicated refunds"))).toBe(true);
    expect(surfacer.filter((p) => p.includes("Webhook retries duplicated refunds")).every((p) => p.includes("Redis"))).toBe(true);

    const m = r.metrics;
    expect(m.status).toEqual({ ready: 3, needs_replan: 0, hitl: 0, failed: 0 });
    expect(m.route_accuracy.value).toBe(1);
    expect(m.plan_coverage).toMatchObject({ num: 2, den: 3 });
    expect(m.plan_coverage.value).toBeCloseTo(2 / 3, 8);
    expect(m.council_coverage).toMatchObject({ value: 0.5, num: 1, den: 2 });
    expect(m.false_block_rate).toMatchObject({ value: 0, den: 2 });
    expect(m.stages.discovery_council).toMatchObject({ runs: 2, mean_rounds: 1, outcomes: { converged: 2 } });
    expect(m.judge_usage.calls).toBe(5);
    expect(m.usage.calls).toBe(m.judge_usage.calls + r.items.reduce((n, o) => n + o.calls.length, 0));
  });

  it("a council that blocks a gold-clean issue is a false block", async () => {
    const { models } = council();
    models["plan.tester"] = scriptedModel("plan.tester", [
      JSON.stringify({
        findings: [
          {
            evidence: "Measure latency before the change.",
            severity: "CRITICAL",
            category: "tests",
            concern: "No test proves the footer shows the build number.",
          },
        ],
      }),
    ]);
    const r = await runPipelineEval({ ...set, items: [items[0] as PipelineItem] }, { calls: calls(models), config });
    expect(r.items[0]?.blocked).toBe(true);
    expect(r.metrics.false_block_rate.value).toBe(1);
  });

  it("a rerun through the same cache makes no model call and gives the same report", async () => {
    const { models, seen } = council();
    const cache = memoryCache();
    const first = await runPipelineEval(set, { calls: calls(models, cache), config });
    const made = [...seen.values()].reduce((n, l) => n + l.length, 0);
    const second = await runPipelineEval(set, { calls: calls(models, cache), config });
    expect([...seen.values()].reduce((n, l) => n + l.length, 0)).toBe(made);
    expect(second.metrics.usage.network_calls).toBe(0);
    const strip = (r: typeof first) => r.items.map(({ calls: _c, judge_calls: _j, wall_ms: _w, ...rest }) => rest);
    expect(strip(second)).toEqual(strip(first));
    // Two runs compare item by item: no difference, no McNemar (that is the gate's).
    const c = compareReports(first, second, { a: "first.json", b: "second.json" });
    expect(c.paired).toBe(3);
    expect(c.mcnemar).toBeNull();
    expect(c.rates.find((x) => x.key === "plan_coverage")).toMatchObject({ diff: 0, ci: [0, 0] });
    expect(c.usage.find((u) => u.key === "network_calls")?.b).toBe(0);
  });

  it("warns when the judge is the same model as a critic", () => {
    const same = configFromObject(
      { providers: { local: { type: "openai-compatible", base_url: "http://127.0.0.1:1/v1" } }, routes: { default: { primary: "local:qwen3:8b" } } },
      { env: {}, cwd: "/" },
    );
    expect(judgeSameModelWarning(same)).toMatch(/^eval pipeline: eval\.judge uses the same model as every critic \(local:qwen3:8b\)/);
    const apart = configFromObject(
      {
        providers: { local: { type: "openai-compatible", base_url: "http://127.0.0.1:1/v1" } },
        routes: { default: { primary: "local:qwen3:8b" }, "eval.judge": { primary: "local:gemma3:12b" } },
      },
      { env: {}, cwd: "/" },
    );
    expect(judgeSameModelWarning(apart)).toBeUndefined();
  });
});

describe("eval pipeline items with a bundled repository (issue 30)", () => {
  const repoItem: PipelineItem = {
    id: "p-code",
    title: "Send one request id per logical request",
    body: "Every request the HttpClient sends should carry an x-request-id header, added through its `beforeRequest` hook; a retry keeps the id.",
    repo: {
      "src/http/retry.ts":
        "/**\n * Runs `attempt` up to `opts.attempts` times. Contract: `beforeRequest` hooks run again on every attempt.\n */\nexport async function withRetry<T>(attempt: (n: number) => Promise<T>, attempts: number): Promise<T> {\n  return attempt(1);\n}\n",
      "src/http/client.ts":
        'import { withRetry } from "./retry";\n\nexport class HttpClient {\n  beforeRequest(hook: (r: Request) => Request): void {}\n  send(url: string) {\n    return withRetry(async () => fetch(url), 3);\n  }\n}\n',
    },
    gold: { route: "load_bearing", clean: false, plan_must_contain: [], council_must_raise: ["hooks rerun on every retry attempt"] },
  };

  it("plans the item reading its repository and again without it: the defect only the code shows is raised in the first and not the second", async () => {
    const seen: string[] = [];
    const models: Record<string, LanguageModel> = {};
    for (const role of [...PIPELINE_ROLES, JUDGE_ROLE]) {
      models[role] = scriptedModel(role, [
        (options) => {
          const prompt = options.prompt.map(messageText).join("\n");
          if (role === "complexity_gate") return "LOAD-BEARING";
          if (["discover.brief", "shape.writer"].includes(role)) return `# ${role}\n\nWhat the issue asks.`;
          if (role === "planner") return "# Plan\n\n1. Register a beforeRequest hook that sets a fresh x-request-id on each request it is given.";
          if (role === "spec.ac_generator") return JSON.stringify({ acceptance_criteria: ["every attempt of one send carries the same id"] });
          // A critic can only say what the code shows when its request carries the code.
          if (role === "plan.risk_skeptic") {
            const code = readDataBlocks(prompt).find((b) => b.kind === "code")?.text;
            seen.push(code ?? "");
            return JSON.stringify({
              findings: code?.includes("hooks run again on every attempt")
                ? [
                    {
                      evidence: "`beforeRequest` hooks run again on every attempt.",
                      severity: "HIGH",
                      category: "risk",
                      concern: "The hooks rerun on every retry attempt, so each retry gets a fresh id.",
                    },
                  ]
                : [],
            });
          }
          if (role === JUDGE_ROLE) {
            const blocks = readDataBlocks(prompt);
            const doc = (blocks[0]?.text ?? "").toLowerCase();
            const words = (blocks[1]?.text ?? "").toLowerCase().match(/[a-z]{5,}/g) ?? [];
            return words.every((w) => doc.includes(w)) ? "YES" : "No.";
          }
          return JSON.stringify({ findings: [] });
        },
      ]);
    }
    const one: LoadedSet<PipelineItem> = { name: "code.json", sha256: "1".repeat(64), items: [repoItem], total: 1 };
    const r = await runPipelineEval(one, { calls: calls(models), config });
    expect(seen.some((c) => c.includes("### src/http/retry.ts:"))).toBe(true);
    expect(seen.some((c) => c === "")).toBe(true); // the run without the repository carried no code
    expect(r.items[0]?.council_checklist.map((c) => c.covered)).toEqual([true]);
    expect(r.items[0]?.without_repo?.council_checklist.map((c) => c.covered)).toEqual([false]);
    expect(r.metrics.code_recall).toEqual({ items: 1, with_repo: 1, without_repo: 0 });
  });

  it("the bundled set's repository items load, and each bundled file stays inside its folder", async () => {
    const { loadPipelineSet } = await import("../../src/eval/sets.js");
    const set = loadPipelineSet();
    const withRepo = set.items.filter((i) => i.repo);
    expect(withRepo.map((i) => i.id)).toEqual(["pipe-013", "pipe-014"]);
    for (const i of withRepo) for (const p of Object.keys(i.repo ?? {})) expect(p.startsWith("/") || p.split("/").includes("..")).toBe(false);
  });
});
