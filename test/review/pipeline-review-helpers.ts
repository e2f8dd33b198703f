import { join } from "node:path";
import { dissent, scratch, type CliResult } from "../support/cli.js";
import { openingText } from "../support/hold.js";
import { quoteUnderReview } from "../support/quote.js";
import { startOpenAIServer, type ChatRequest, type FakeOpenAI, type Reply } from "../support/openai-server.js";

/** The role a request speaks for, read from the persona's first line (`Role: <role>`), which follows the shared blocks. */
export function roleOf(req: ChatRequest): string {
  return /^Role: (\S+)$/m.exec(openingText(req))?.[1] ?? "unknown";
}

export const isRetry = (req: ChatRequest) => req.body.messages.some((m) => m.role === "assistant");

/** Agreeable default replies by role. */
export function agree(role: string): string {
  if (role === "complexity_gate") return "LOAD-BEARING";
  if (["discover.brief", "shape.writer", "planner"].includes(role)) return `# ${role}\n\nArtifact written by ${role}.`;
  if (role === "spec.ac_generator") return JSON.stringify({ acceptance_criteria: ["A user sees the retry succeed"] });
  return JSON.stringify({ findings: [] });
}

export type RoleHandler = (role: string, req: ChatRequest) => Reply | string | undefined;

/** One model for every role (as an acceptance suite may route them), told apart by the system prompt. */
export interface OneModelWorld {
  dir: string;
  home: string;
  server: FakeOpenAI;
  handler: RoleHandler;
  requestsOf(role: string): ChatRequest[];
  config(extra?: string): void;
  run(...args: string[]): Promise<CliResult>;
  json<T = Record<string, unknown>>(...args: string[]): Promise<T>;
  close(): Promise<void>;
}

export async function oneModelWorld(): Promise<OneModelWorld> {
  const s = scratch("dissent-review-");
  const w: Partial<OneModelWorld> & { handler: RoleHandler } = { handler: () => undefined };
  const server = await startOpenAIServer((req) => {
    const role = roleOf(req);
    const r = w.handler(role, req);
    if (r === undefined) return { content: agree(role) };
    return typeof r === "string" ? { content: quoteUnderReview(req, r) } : r;
  });
  const home = join(s.dir, "home");
  const config = (extra = "") =>
    s.write(
      "dissent.config.yaml",
      [
        "providers:",
        `  local: { type: openai-compatible, base_url: "${server.url}" }`,
        "routes:",
        '  default: { primary: "local:one-model" }',
        "seed: 7",
        "call_timeout_ms: 10000",
        "retry_backoff_ms: 5",
        extra,
      ].join("\n"),
    );
  config();
  const run = (...args: string[]) => dissent(args, { cwd: s.dir, env: { DISSENT_HOME: home } });
  return Object.assign(w, {
    dir: s.dir,
    home,
    server,
    requestsOf: (role: string) => server.requests.filter((r) => roleOf(r) === role),
    config,
    run,
    async json<T>(...args: string[]) {
      const r = await run(...args);
      if (r.code !== 0) throw new Error(`dissent ${args.join(" ")} exited ${String(r.code)}: ${r.stderr}`);
      return JSON.parse(r.stdout) as T;
    },
    async close() {
      await server.close();
      s.cleanup();
    },
  }) as OneModelWorld;
}

export const findings = (...fs: Record<string, unknown>[]) => JSON.stringify({ findings: fs });
