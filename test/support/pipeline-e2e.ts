import { dissent, scratch, type CliResult } from "./cli.js";
import { startOpenAIServer, type ChatRequest, type FakeOpenAI, type Reply } from "./openai-server.js";
import { agreeableReply, rolesConfig } from "./roles-config.js";

/** A reply per pipeline role (= model name); `n` counts that model's requests from 0. */
export type ModelHandler = (model: string, n: number, req: ChatRequest) => Reply | undefined | Promise<Reply | undefined>;

/** `issue plan --json` stdout, the fields these tests read (docs/issue.md, r2 fields included). */
export interface StageRunJson {
  stage: string;
  phase: "discover" | "shape" | "plan" | "spec";
  rounds: number;
  retries: number;
  outcome: string;
  concerns_raised: number;
  concerns_forwarded: number;
  calls: number;
  critic_failures: number;
  ungrounded_findings: number;
  invalid_findings: number;
}
export interface ConcernJson {
  id: string;
  stage: string;
  raised_by: string;
  severity: string;
  category: string;
  concern: string;
  evidence: string;
  must_address_by: string;
  raised_severity?: string;
}
export interface PlanJson {
  issue: string;
  route: string;
  status: "ready" | "needs_replan" | "hitl";
  plan: string;
  acceptance_criteria: string[];
  pending_concerns: ConcernJson[];
  stages: StageRunJson[];
  labels: string[];
  calls: number;
}

/** A scratch folder whose config routes every pipeline role to a model of its name on one test server. */
export interface PipelineWorld {
  dir: string;
  server: FakeOpenAI;
  /** How many requests a model (= role) got. */
  requestsFor(model: string): number;
  run(args: string[], opts?: { env?: Record<string, string>; timeoutMs?: number }): Promise<CliResult>;
  /** `issue new` (local tracker); returns the id. */
  newIssue(title: string, body?: string, labels?: string[]): Promise<string>;
  /** `issue plan ID --json`, parsed (throws with stderr when it did not exit 0). */
  plan(id: string): Promise<{ out: PlanJson; result: CliResult }>;
  close(): Promise<void>;
}

/**
 * Starts a server answering each model with `handler`, falling back to an agreeable council
 * (`agreeableReply`) where the handler returns undefined. `extra` is YAML appended to the config;
 * `provider` is added to the provider `local`.
 */
export async function pipelineWorld(handler: ModelHandler, opts: { extra?: string; provider?: string } = {}): Promise<PipelineWorld> {
  const counts = new Map<string, number>();
  const server = await startOpenAIServer(async (req) => {
    const model = req.body.model;
    const n = counts.get(model) ?? 0;
    counts.set(model, n + 1);
    return (await handler(model, n, req)) ?? { content: agreeableReply(model) };
  });
  const s = scratch();
  const config = rolesConfig(server.url, opts.extra ?? "");
  // `provider` adds settings to the one provider's flow mapping (`max_concurrency: 1`, say).
  s.write("dissent.config.yaml", opts.provider ? config.replace(`base_url: "${server.url}" }`, `base_url: "${server.url}", ${opts.provider} }`) : config);
  const home = `${s.dir}/home`;
  const run = (args: string[], opts: { env?: Record<string, string>; timeoutMs?: number } = {}) =>
    dissent(args, { cwd: s.dir, env: { DISSENT_HOME: home, ...opts.env }, ...(opts.timeoutMs ? { timeoutMs: opts.timeoutMs } : {}) });
  return {
    dir: s.dir,
    server,
    requestsFor: (model) => server.requests.filter((r) => r.body.model === model).length,
    run,
    async newIssue(title, body = "", labels = []) {
      const r = await run(["issue", "new", "--title", title, "--body", body, ...labels.flatMap((l) => ["--label", l]), "--json"]);
      if (r.code !== 0) throw new Error(`issue new exited ${String(r.code)}: ${r.stderr}`);
      return (JSON.parse(r.stdout) as { id: string }).id;
    },
    async plan(id) {
      const result = await run(["issue", "plan", id, "--json"]);
      if (result.code !== 0) throw new Error(`issue plan exited ${String(result.code)}: ${result.stderr}`);
      return { out: JSON.parse(result.stdout) as PlanJson, result };
    },
    close: async () => {
      await server.close();
      s.cleanup();
    },
  };
}

/** A findings reply as JSON text. */
export function findings(...items: { severity: string; concern: string; evidence?: string; category?: string }[]): string {
  return JSON.stringify({ findings: items });
}

/** The StageRun of a phase. */
export function stageOf(out: PlanJson, phase: StageRunJson["phase"]): StageRunJson {
  const s = out.stages.find((x) => x.phase === phase);
  if (!s) throw new Error(`no ${phase} stage in ${JSON.stringify(out.stages.map((x) => x.phase))}`);
  return s;
}
