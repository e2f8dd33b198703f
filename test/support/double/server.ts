import { startOpenAIServer, type ChatRequest, type Reply } from "../openai-server.js";
import type { Ctx } from "./context.js";
import { acceptanceReply } from "./acceptance.js";
import { criticReply, reviewerReply } from "./critics.js";
import { challengerReply, executorReply, revisionReply } from "./gate.js";
import { criteriaReply, gateReply, producerReply } from "./producers.js";
import { hashOf, rngFor } from "./prng.js";
import { promptCache } from "./prompt-cache.js";
import { dice, perfect } from "./quirks.js";
import { CHAL_MODEL, EXEC_MODEL, PRODUCERS, readRequest, roleOf, type Seen } from "./request.js";
import type { Quirks, Scenario } from "./types.js";
import { verifierReply } from "./verifier.js";

export interface DoubleOptions {
  /** Seeds every choice the double makes (default 7). */
  seed?: number;
  /** A preset (`perfect`, `small8b`, `frontier`), or any mix: missing quirks are off. */
  quirks?: Partial<Quirks>;
  /** What is wrong in the world; unknown issues and prompts get sound answers and no findings. */
  scenario?: Scenario;
  /** Models (roles) whose provider is down: every request to them gets HTTP 503. */
  down?: readonly string[];
  /** Report prompt-cached tokens as OpenAI's automatic prompt cache would (prompt-cache.ts), in arrival order. */
  promptCache?: boolean;
}

export interface RealisticDouble {
  /** Base URL (`http://127.0.0.1:PORT/v1`) for an openai-compatible provider. */
  url: string;
  /** Every request received, in arrival order. */
  requests: ChatRequest[];
  /** Requests of one role: a pipeline role (= model), or `executor`, `revision`, `challenger`. */
  byRole(role: string): ChatRequest[];
  /** Most requests ever processed at the same time (1 with `serial`). */
  readonly maxInFlight: number;
  /** With `promptCache`: each request's prompt and cached tokens as reported, in arrival order, with its issue's title. */
  readonly usage: readonly { model: string; issue?: string; promptTokens: number; cachedTokens: number }[];
  close(): Promise<void>;
}

/** The reply text of one request, by role. */
function answer(ctx: Ctx, seen: Seen): string {
  const role = seen.model;
  if (role === EXEC_MODEL) return seen.assistant === undefined ? executorReply(ctx, seen) : revisionReply(ctx, seen);
  if (role === CHAL_MODEL) return challengerReply(ctx, seen);
  if (role === "complexity_gate") return gateReply(ctx, seen);
  if ((PRODUCERS as readonly string[]).includes(role)) return producerReply(ctx, seen, role);
  if (role === "spec.ac_generator") return criteriaReply(ctx, seen, role);
  if (role === "plan_reviewer") return reviewerReply(ctx, seen, role);
  if (role === "review.acceptance") return acceptanceReply(ctx, seen);
  if (role === "verifier" || seen.blocks.some((b) => b.kind === "finding")) return verifierReply(ctx, seen);
  // Any other model: judge by what the request carries.
  if (seen.blocks.some((b) => b.kind === "under_review")) return criticReply(ctx, seen, role);
  if (seen.lastUser.includes('"executor_output"')) return challengerReply(ctx, seen);
  return seen.assistant === undefined ? executorReply(ctx, seen) : revisionReply(ctx, seen);
}

const tokens = (text: string) => Math.max(1, Math.ceil(text.length / 4));

/**
 * An OpenAI-compatible chat-completions server on 127.0.0.1 whose models behave like real ones:
 * deterministic (same seed and requests, same replies) and as quirky as the profile says.
 */
export async function startRealisticDouble(opts: DoubleOptions = {}): Promise<RealisticDouble> {
  const seed = opts.seed ?? 7;
  const quirks: Quirks = { ...perfect, ...opts.quirks };
  const scenario = opts.scenario ?? {};
  const rounds = new Map<string, string[]>();
  const occurrences = new Map<string, number>();
  let inFlight = 0;
  let maxInFlight = 0;
  let gpu: Promise<void> = Promise.resolve();
  const cache = opts.promptCache ? promptCache() : undefined;
  const usageLog: { model: string; issue?: string; promptTokens: number; cachedTokens: number }[] = [];

  const roundOf = (role: string, title: string, artifact: string, text: string): number => {
    const k = `${role}\u0000${title}\u0000${artifact}`;
    const seenTexts = rounds.get(k) ?? [];
    rounds.set(k, seenTexts);
    const h = hashOf(text);
    const at = seenTexts.indexOf(h);
    return at !== -1 ? at : seenTexts.push(h) - 1;
  };

  const work = async (_req: ChatRequest, seen: Seen, occurrence: number, prompt?: { promptTokens: number; cachedTokens: number }): Promise<Reply> => {
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    try {
      if (quirks.latencyMs > 0) await new Promise((r) => setTimeout(r, quirks.latencyMs));
      const ctx: Ctx = { seed, quirks, scenario, dice: dice(quirks, seed, seen.key), roundOf };
      let content = answer(ctx, seen);
      const usage = (c: string) =>
        prompt
          ? { prompt_tokens: prompt.promptTokens, completion_tokens: tokens(c), prompt_tokens_details: { cached_tokens: prompt.cachedTokens } }
          : { prompt_tokens: tokens(seen.messages.map((m) => m.text).join("\n")), completion_tokens: tokens(c) };
      // Transient faults are drawn per attempt: an identical retry may go through.
      const faults = dice(quirks, seed, `${seen.key}#${occurrence}`);
      if (faults.on("emptyReply")) {
        const reasoning = ctx.dice.on("think") ? "<think>\nLet me think about this carefully.\n</think>\n" : "";
        content = reasoning || rngFor(seed, seen.key, occurrence, "empty").pick(["", "\n\n"]);
        return { content, usage: usage(content) };
      }
      if (faults.on("truncate")) {
        const half = content.slice(0, Math.floor(content.length / 2));
        const cut = rngFor(seed, seen.key, occurrence, "cut").chance(0.5);
        return cut ? { content: half, sse: true, cutStream: true, usage: usage(half) } : { content: half, finishReason: "length", usage: usage(half) };
      }
      return { content, usage: usage(content) };
    } finally {
      inFlight--;
    }
  };

  const server = await startOpenAIServer((req) => {
    const seen = readRequest(req);
    if (opts.down?.includes(seen.model)) return { status: 503, raw: JSON.stringify({ error: { message: `model ${seen.model} is unavailable` } }) };
    const occurrence = occurrences.get(seen.key) ?? 0;
    occurrences.set(seen.key, occurrence + 1);
    // The cache sees requests as they arrive: a prefix an earlier request sent is cached for this one.
    const prompt = cache?.read(seen.messages);
    if (prompt) usageLog.push({ model: seen.model, ...(seen.issue ? { issue: seen.issue.title } : {}), ...prompt });
    if (!quirks.serial) return work(req, seen, occurrence, prompt);
    const turn = gpu.then(() => work(req, seen, occurrence, prompt));
    gpu = turn.then(
      () => undefined,
      () => undefined,
    );
    return turn;
  });

  return {
    url: server.url,
    requests: server.requests,
    byRole: (role) => server.requests.filter((r) => roleOf(r) === role),
    get maxInFlight() {
      return maxInFlight;
    },
    usage: usageLog,
    close: () => server.close(),
  };
}
