/**
 * A scratch world for `dissent factory` tests: a model server answering every pipeline role by
 * model name (an agreeable council unless the test says otherwise), a config routing the roles to
 * it, a home, and — with `postgres` — a real PostgreSQL database holding the store and the queue.
 * Commands run as a user runs them: the built CLI, spawned.
 */
import type { ChildProcess } from "node:child_process";
import { dissent, scratch, type CliResult } from "./cli.js";
import { startOpenAIServer, type ChatRequest, type FakeOpenAI, type Reply } from "./openai-server.js";
import { freshDatabase } from "./postgres.js";
import { startDissent } from "./proc.js";
import { agreeableReply, rolesConfig } from "./roles-config.js";

/** A reply per model (= role); undefined falls back to the agreeable council. `n` counts that model's requests from 0. */
export type ModelHandler = (model: string, n: number, req: ChatRequest) => Reply | undefined | Promise<Reply | undefined>;

/** An event as `dissent events --json` prints it. */
export interface EventJson {
  type: string;
  at: string;
  issue_id: string | null;
  stage?: string;
  cycle?: number;
  cached?: boolean;
  attempt?: number;
  error?: string;
  retry_at?: string | null;
  pr?: number;
  wiki_entries?: string[];
  added?: string[];
  removed?: string[];
  labels?: string[];
  [k: string]: unknown;
}

/** `issue show --json`, the fields these tests read. */
export interface ShowJson {
  id: string;
  status: string;
  labels: string[];
  cycle: number;
  calls: number;
  stages: { stage: string; phase: string; outcome: string }[];
  pending_concerns: { id: string; severity: string }[];
}

export interface FactoryWorld {
  dir: string;
  home: string;
  server: FakeOpenAI;
  /** The database URL, when the store is PostgreSQL. */
  databaseUrl?: string;
  /** The environment every command gets (DISSENT_HOME, the database URL). */
  env: Record<string, string>;
  /** Replaces how the model server answers. */
  answer(handler: ModelHandler): void;
  requestsFor(model: string): number;
  run(args: string[], opts?: { env?: Record<string, string>; timeoutMs?: number }): Promise<CliResult>;
  /** Starts a command without waiting (a factory that runs until signalled). */
  start(args: string[], opts?: { env?: Record<string, string> }): { child: ChildProcess; done: Promise<CliResult> };
  /** `issue new` on the local tracker; returns the id. */
  newIssue(title: string, labels?: string[]): Promise<string>;
  events(issueId?: string): Promise<EventJson[]>;
  show(issueId: string): Promise<ShowJson>;
  close(): Promise<void>;
}

export interface FactoryWorldOptions {
  /** YAML appended to the config (factory settings, a tracker, a budget). */
  extra?: string;
  /** Settings added to the one provider's mapping (`max_concurrency: 2`, say). */
  provider?: string;
  /** The store on a fresh PostgreSQL database. */
  postgres?: boolean;
  /** The store on this PostgreSQL database (a cluster the test stops and starts) instead of a fresh one. */
  databaseUrl?: string;
}

export async function factoryWorld(handler: ModelHandler = () => undefined, opts: FactoryWorldOptions = {}): Promise<FactoryWorld> {
  let current = handler;
  const counts = new Map<string, number>();
  const server = await startOpenAIServer(async (req) => {
    const model = req.body.model;
    const n = counts.get(model) ?? 0;
    counts.set(model, n + 1);
    return (await current(model, n, req)) ?? { content: agreeableReply(model) };
  });
  const s = scratch("dissent-factory-");
  const home = `${s.dir}/home`;
  const databaseUrl = opts.databaseUrl ?? (opts.postgres ? await freshDatabase() : undefined);
  const extra = [opts.extra ?? "", ...(databaseUrl ? ["store: { type: postgres }"] : [])].join("\n");
  const config = rolesConfig(server.url, extra);
  s.write("dissent.config.yaml", opts.provider ? config.replace(`base_url: "${server.url}" }`, `base_url: "${server.url}", ${opts.provider} }`) : config);
  const env: Record<string, string> = { DISSENT_HOME: home, ...(databaseUrl ? { DISSENT_DATABASE_URL: databaseUrl } : {}) };
  const run = (args: string[], o: { env?: Record<string, string>; timeoutMs?: number } = {}) =>
    dissent(args, { cwd: s.dir, env: { ...env, ...o.env }, ...(o.timeoutMs ? { timeoutMs: o.timeoutMs } : {}) });
  const parseLines = (r: CliResult) =>
    r.stdout
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as EventJson);
  return {
    dir: s.dir,
    home,
    server,
    ...(databaseUrl ? { databaseUrl } : {}),
    env,
    answer: (h) => void (current = h),
    requestsFor: (model) => server.requests.filter((r) => r.body.model === model).length,
    run,
    start: (args, o = {}) => startDissent(args, { cwd: s.dir, env: { ...env, ...o.env } }),
    async newIssue(title, labels = []) {
      const r = await run(["issue", "new", "--title", title, ...labels.flatMap((l) => ["--label", l]), "--json"]);
      if (r.code !== 0) throw new Error(`issue new exited ${String(r.code)}: ${r.stderr}`);
      return (JSON.parse(r.stdout) as { id: string }).id;
    },
    async events(issueId) {
      const r = await run(["events", "--json", ...(issueId ? ["--issue", issueId] : [])]);
      if (r.code !== 0) throw new Error(`events exited ${String(r.code)}: ${r.stderr}`);
      return parseLines(r);
    },
    async show(issueId) {
      const r = await run(["issue", "show", issueId, "--json"]);
      if (r.code !== 0) throw new Error(`issue show exited ${String(r.code)}: ${r.stderr}`);
      return JSON.parse(r.stdout) as ShowJson;
    },
    close: async () => {
      await server.close();
      s.cleanup();
    },
  };
}

/** The `--json` lines of a factory's stdout. */
export function factoryLines(stdout: string): ({ event: string; issue: string; at: string } & Record<string, unknown>)[] {
  return stdout
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { event: string; issue: string; at: string } & Record<string, unknown>);
}
