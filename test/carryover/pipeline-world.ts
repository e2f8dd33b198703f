/**
 * A scratch world for end-to-end carryover tests: a fake OpenAI-compatible server that answers
 * by model name, a config routing EVERY pipeline role to a model named after the role, and a
 * runner for the built CLI with DISSENT_HOME set.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import { readDataBlocks } from "../../src/prompting/data-block.js";
import { quoteUnderReview } from "../support/quote.js";
import { STAGES } from "../../src/pipeline/stages.js";
import { dissent, scratch, type CliResult } from "../support/cli.js";
import { startOpenAIServer, type ChatRequest, type FakeOpenAI, type Reply } from "../support/openai-server.js";

export const PRODUCERS = [...new Set(STAGES.map((s) => s.producer))];
export const CRITICS = [...new Set(STAGES.flatMap((s) => s.critics))];
/** Every role of the pipeline: the gate, the reviewer, and every producer and critic of the stage table. */
export const ROLES = ["complexity_gate", "plan_reviewer", ...PRODUCERS, ...CRITICS];

export interface FindingSpec {
  severity: "CRITICAL" | "HIGH" | "MEDIUM" | "LOW";
  concern: string;
  category?: string;
  evidence?: string;
  human_required?: boolean;
}

/** What the scripted server answers for one role; a function gets the request (and that role's call count). */
export type RoleScript = string | ((req: ChatRequest, n: number) => string);

/** The text of every message of a request, joined. */
export const requestText = (req: ChatRequest): string => req.body.messages.map((m) => m.content).join("\n\n");

/** The first user message of a request (the one holding the issue and its context). */
export const firstUser = (req: ChatRequest): string => req.body.messages.find((m) => m.role === "user")?.content ?? "";

/** Issue ids by title, as the worlds of this process created them (requests name an issue by its title and body). */
const idsByTitle = new Map<string, string>();

/** Which issue a pipeline request is about: the title in its `issue` data block. */
export const issueOf = (req: ChatRequest): string | undefined => {
  const issue = readDataBlocks(firstUser(req)).find((b) => b.kind === "issue");
  const title = issue?.text.split("\n")[0]?.replace(/^#\s*/, "").trim();
  return title === undefined ? undefined : idsByTitle.get(title);
};

export const findings = (list: FindingSpec[] = []): string => JSON.stringify({ findings: list });

/** The ids of the pending concerns a producer was told to address (its `pending_concerns` data block). */
export function pendingIdsGiven(req: ChatRequest): string[] {
  const block = readDataBlocks(firstUser(req)).find((b) => b.kind === "pending_concerns");
  return block ? (JSON.parse(block.text) as { id: string }[]).map((c) => c.id) : [];
}

/**
 * A handler answering by `req.body.model` (= the role). Unscripted producers reply markdown,
 * the AC generator one criterion, critics/judge/reviewer no findings, the gate LOAD-BEARING.
 * A request for an unknown model is answered 400 so a misrouted role fails loudly.
 */
export function scripted(script: Partial<Record<string, RoleScript>> = {}) {
  const counts = new Map<string, number>();
  return (req: ChatRequest): Reply => {
    const role = req.body.model;
    const n = counts.get(role) ?? 0;
    counts.set(role, n + 1);
    const s = script[role];
    if (s !== undefined) return { content: quoteUnderReview(req, typeof s === "function" ? s(req, n) : s) };
    if (role === "complexity_gate") return { content: "LOAD-BEARING" };
    if (role === "spec.ac_generator") return { content: JSON.stringify({ acceptance_criteria: ["The change is covered by an automated test."] }) };
    if (PRODUCERS.includes(role)) return { content: `# ${role} artifact\n\nA plain, stable draft from ${role}.\n` };
    if (CRITICS.includes(role) || role === "plan_reviewer") return { content: findings([]) };
    return { status: 400, raw: JSON.stringify({ error: { message: `test server: no such model ${role}` } }) };
  };
}

/** The config: one openai-compatible provider, every role routed to `local:<role>`. */
export function pipelineConfig(url: string, extra = ""): string {
  const lines = [
    "providers:",
    `  local: { type: openai-compatible, base_url: "${url}" }`,
    "routes:",
    `  default: { primary: "local:unrouted-role" }`,
    ...ROLES.map((r) => `  ${r}: { primary: "local:${r}" }`),
    "seed: 7",
    "call_timeout_ms: 10000",
    "retry_backoff_ms: 1",
    "budget: { max_calls_per_issue: 60 }",
    "tracker: { type: local }",
  ];
  return `${lines.join("\n")}\n${extra}`;
}

export interface Event {
  type: string;
  at: string;
  issue_id: string | null;
  [k: string]: unknown;
}

export interface PipelineWorld {
  dir: string;
  home: string;
  wikiDir: string;
  server: FakeOpenAI;
  run(args: string[], opts?: { input?: string; env?: Record<string, string> }): Promise<CliResult>;
  /** `issue new --label …`: returns the id. */
  newIssue(title: string, body: string, labels?: string[]): Promise<string>;
  /** `issue plan ID --json`, which must exit 0. */
  plan(id: string): Promise<PlanJson>;
  /** `issue show ID --json`. */
  show(id: string): Promise<ShowJson>;
  /** `events --json` (of one issue, if given). */
  events(issue?: string): Promise<Event[]>;
  /** File names under DISSENT_HOME/wiki (only `.md`, sorted). */
  wikiFiles(): string[];
  wikiText(name: string): string;
  close(): Promise<void>;
}

export interface ConcernJson {
  id: string;
  phase: string;
  stage: string;
  raised_by: string;
  severity: string;
  category: string;
  concern: string;
  evidence: string;
  must_address_by: string;
  human_required: boolean;
  fingerprint: string;
  raised_at: string;
}

export interface PlanJson {
  issue: string;
  status: string;
  route: string;
  pending_concerns: ConcernJson[];
  labels: string[];
  stages: { stage: string; outcome: string }[];
}

export interface ShowJson {
  id: string;
  labels: string[];
  status: string;
  pending_concerns: ConcernJson[];
  addressed_concerns: { concern_id: string; resolution_kind: string; note: string; resolved_by: string; fingerprint: string }[];
}

function ok(r: CliResult, what: string): CliResult {
  if (r.code !== 0) throw new Error(`${what} exited ${String(r.code)}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  return r;
}

export async function pipelineWorld(script: Partial<Record<string, RoleScript>> = {}): Promise<PipelineWorld> {
  const s = scratch("dissent-carryover-");
  const server = await startOpenAIServer(scripted(script));
  const home = join(s.dir, "home");
  const wikiDir = join(home, "wiki");
  s.write("dissent.config.yaml", pipelineConfig(server.url));
  const run: PipelineWorld["run"] = (args, opts = {}) =>
    dissent(args, { cwd: s.dir, env: { DISSENT_HOME: home, ...opts.env }, timeoutMs: 60_000, ...(opts.input !== undefined ? { input: opts.input } : {}) });
  const w: PipelineWorld = {
    dir: s.dir,
    home,
    wikiDir,
    server,
    run,
    async newIssue(title, body, labels = []) {
      const r = ok(await run(["issue", "new", "--title", title, "--body", body, ...labels.flatMap((l) => ["--label", l]), "--json"]), "issue new");
      const id = (JSON.parse(r.stdout) as { id: string }).id;
      idsByTitle.set(title, id);
      return id;
    },
    async plan(id) {
      const r = ok(await run(["issue", "plan", id, "--json"]), `issue plan ${id}`);
      return JSON.parse(r.stdout) as PlanJson;
    },
    async show(id) {
      const r = ok(await run(["issue", "show", id, "--json"]), `issue show ${id}`);
      return JSON.parse(r.stdout) as ShowJson;
    },
    async events(issue) {
      const r = ok(await run(["events", "--json", ...(issue ? ["--issue", issue] : [])]), "events");
      return r.stdout
        .split("\n")
        .filter((l) => l.trim() !== "")
        .map((l) => JSON.parse(l) as Event);
    },
    wikiFiles() {
      try {
        return readdirSync(wikiDir)
          .filter((n) => n.endsWith(".md"))
          .sort();
      } catch {
        return [];
      }
    },
    wikiText: (name) => readFileSync(join(wikiDir, name), "utf8"),
    close: async () => {
      await server.close();
      s.cleanup();
    },
  };
  return w;
}

/** The front matter of a wiki file, parsed (throws when there is none). */
export function frontMatter(text: string): Record<string, unknown> {
  const m = /^---\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/.exec(text);
  if (!m) throw new Error(`no front matter in:\n${text}`);
  return parseYaml(m[1] ?? "") as Record<string, unknown>;
}

/** The part of a wiki file after its front matter. */
export function bodyOf(text: string): string {
  const m = /^---\r?\n[\s\S]*?\r?\n---[ \t]*(?:\r?\n|$)/.exec(text);
  if (!m) throw new Error("no front matter");
  return text.slice(m[0].length);
}
