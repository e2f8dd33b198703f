import type { LanguageModelV3CallOptions, LanguageModelV3GenerateResult } from "@ai-sdk/provider";
import { MockLanguageModelV3 } from "ai/test";
import type { LanguageModel } from "ai";
import { DEFAULT_MAX_CALLS_PER_ISSUE } from "../../src/config/load.js";
import { fixedRouter } from "../../src/models/router.js";
import type { CallContext } from "../../src/models/types.js";
import { planIssue, type PlanIssueDeps, type PlanResult, type KnownGaps } from "../../src/pipeline/plan-issue.js";
import { PIPELINE_ROLES } from "../../src/pipeline/stages.js";
import type { Store, StoredEvent } from "../../src/store/port.js";
import { memoryStore } from "../../src/store/sqlite.js";
import { localTracker, type LocalTracker } from "../../src/trackers/local.js";

/** Every role the pipeline calls. */
export const ROLES = [...PIPELINE_ROLES];

/** One model call as the scripted world saw it. */
export interface SeenCall {
  role: string;
  /** How many times this role had been called before (0 for its first call). */
  n: number;
  system: string;
  /** The user/assistant turns, joined. */
  prompt: string;
  messages: { role: string; text: string }[];
}

/** A reply: text, or an Error to throw (a failing model). */
export type Script = (call: SeenCall) => string | Error | Promise<string | Error>;

function textOf(options: LanguageModelV3CallOptions): { system: string; messages: { role: string; text: string }[] } {
  let system = "";
  const messages: { role: string; text: string }[] = [];
  for (const m of options.prompt) {
    if (m.role === "system") system += m.content;
    else {
      const text = m.content.map((p) => ("text" in p && typeof p.text === "string" ? p.text : "")).join("");
      messages.push({ role: m.role, text });
    }
  }
  return { system, messages };
}

const reply = (text: string): LanguageModelV3GenerateResult => ({
  content: [{ type: "text", text }],
  finishReason: { unified: "stop", raw: "stop" },
  usage: {
    inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
    outputTokens: { total: 5, text: 5, reasoning: 0 },
  },
  warnings: [],
});

/** Default replies of a council that agrees with everything. */
export function agreeable(call: SeenCall): string {
  switch (call.role) {
    case "complexity_gate":
      return "LOAD-BEARING";
    case "discover.brief":
    case "shape.writer":
    case "planner":
      return `# ${call.role}\n\nArtifact written by ${call.role}.`;
    case "spec.ac_generator":
      return JSON.stringify({ acceptance_criteria: ["A user sees the retry succeed", "A third failure is reported as an error"] });
    case "verifier":
      // An agreeable second opinion: a lone HIGH is not a defect of this artifact.
      return JSON.stringify({ evidence: "", reason: "Not a defect of this artifact.", verdict: "refute" });
    default:
      return JSON.stringify({ findings: [] });
  }
}

/** An in-process pipeline over scripted AI SDK mock models, the real call door, cache, store and fold. */
export interface World {
  store: Store;
  tracker: LocalTracker;
  calls: SeenCall[];
  /** Warnings the run printed (critic failures, labels). */
  warnings: string[];
  callsOf(role: string): SeenCall[];
  newIssue(title: string, body?: string, labels?: string[]): Promise<string>;
  plan(id: string, overrides?: Partial<PlanIssueDeps>): Promise<PlanResult>;
  eventsOf(id: string): Promise<StoredEvent[]>;
  labels(id: string): Promise<string[]>;
}

export async function scriptedWorld(script: Script, opts: { maxCalls?: number; knownGaps?: (text: string) => KnownGaps | undefined } = {}): Promise<World> {
  const store = await memoryStore();
  const tracker = localTracker(store);
  const calls: SeenCall[] = [];
  const warnings: string[] = [];
  const counts = new Map<string, number>();
  const models: Record<string, LanguageModel> = {};
  for (const role of ROLES) {
    models[role] = new MockLanguageModelV3({
      provider: "scripted",
      modelId: role,
      doGenerate: async (options) => {
        const n = counts.get(role) ?? 0;
        counts.set(role, n + 1);
        const { system, messages } = textOf(options);
        const seen: SeenCall = { role, n, system, messages, prompt: messages.map((m) => m.text).join("\n\n") };
        calls.push(seen);
        const out = await script(seen);
        if (out instanceof Error) throw out;
        return reply(out);
      },
    });
  }
  const ctx: CallContext = {
    router: fixedRouter(models),
    cache: store.cache,
    cacheMode: "use",
    seed: 7,
    timeoutMs: 5_000,
    maxRetries: 0,
    backoffMs: 1,
  };
  return {
    store,
    tracker,
    calls,
    warnings,
    callsOf: (role) => calls.filter((c) => c.role === role),
    async newIssue(title, body = "", labels = []) {
      const created = await tracker.create({ title, body, labels: [...labels, "dissent-find"] });
      return created.id;
    },
    plan: (id, overrides = {}) =>
      planIssue(id, {
        store,
        tracker,
        calls: ctx,
        maxCalls: opts.maxCalls ?? DEFAULT_MAX_CALLS_PER_ISSUE,
        warn: (m) => void warnings.push(m),
        ...(opts.knownGaps ? { knownGaps: async (text: string) => opts.knownGaps?.(text) } : {}),
        ...overrides,
      }),
    eventsOf: (id) => store.events({ issueId: id }),
    labels: async (id) => (await tracker.get(id)).labels,
  };
}
