/**
 * A store filled by real runs, for the dashboard's tests: a fake OpenAI-compatible server on
 * 127.0.0.1 answering each pipeline role by model name (test/carryover/pipeline-world), the built
 * CLI planning and merging issues, and `dissent serve` started as a user starts it.
 */
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { dissent, scratch, type CliResult } from "../support/cli.js";
import { startOpenAIServer, type ChatRequest, type FakeOpenAI, type Reply } from "../support/openai-server.js";
import { startDissent, until } from "../support/proc.js";
import { firstUser, ROLES, scripted, type FindingSpec, type RoleScript } from "../carryover/pipeline-world.js";
import { readDataBlocks } from "../../src/prompting/data-block.js";
import { CHAL_MODEL, EXEC_MODEL, frontier, startRealisticDouble, type Defect, type RealisticDouble } from "../support/double/index.js";
import { rolesConfig } from "../support/roles-config.js";

export { findings } from "../carryover/pipeline-world.js";
export type { FindingSpec } from "../carryover/pipeline-world.js";

/** Issue ids by title, as this module's worlds created them. */
const titles = new Map<string, string>();

/** Which issue a pipeline request is about: the title in its `issue` data block. */
export function issueOf(req: ChatRequest): string | undefined {
  const issue = readDataBlocks(firstUser(req)).find((b) => b.kind === "issue");
  const title = issue?.text.split("\n")[0]?.replace(/^#\s*/, "").trim();
  return title === undefined ? undefined : titles.get(title);
}

export const CRIT: FindingSpec = { severity: "CRITICAL", category: "security", concern: "Nobody checked that the upload endpoint rejects oversized payloads" };
export const HIGH: FindingSpec = {
  severity: "HIGH",
  category: "edge_cases",
  concern: "Acceptance criteria never mention concurrent writers to the same upload",
};
export const ADVICE: FindingSpec = { severity: "MEDIUM", category: "test_strategy", concern: "No test covers an upload interrupted halfway through" };

export const HUMAN: FindingSpec = {
  severity: "CRITICAL",
  category: "compliance",
  concern: "Deleting an account must be confirmed by a person because legal retention rules apply",
  human_required: true,
};
export const REJECT: FindingSpec = { severity: "HIGH", category: "correctness", concern: "The plan never says how a failed export is retried" };

/** Issue texts: the first ships gaps; the second is related (the wiki is given to it); the third waits. */
export const ISSUES = {
  shipped: { title: "Accept file uploads on the profile page", body: "Users attach a file of up to 10 MB through the upload endpoint." },
  related: {
    title: "Resumable uploads",
    body: "The upload endpoint should accept oversized payloads in chunks, and cope with concurrent writers to the same upload.",
  },
  waiting: { title: "Dark mode for the settings page", body: "People want a darker colour scheme at night." },
  hitl: { title: "Delete accounts on request", body: "A user can ask for their account and all its data to be deleted." },
  replan: { title: "Nightly export of invoices", body: "Accounting wants every invoice of the day exported as CSV at 02:00." },
};

/** Findings by issue (by the order worlds create them) and role: the rest of the council agrees. */
const FINDINGS: Record<string, Partial<Record<string, FindingSpec[]>>> = {
  "1": { "discovery.problem_sharpener": [CRIT], "spec.judge": [HIGH], "plan.tester": [ADVICE] },
  "4": { "plan.risk_skeptic": [HUMAN] },
  "5": { plan_reviewer: [REJECT] },
};

/** What the scripted server answers: issue 1 gets a CRITICAL (discovery), a HIGH (spec judge) and advice (tester); 4 a concern for a person; 5 a reviewer's rejection. */
export function script(extra: Partial<Record<string, RoleScript>> = {}): Partial<Record<string, RoleScript>> {
  const roles = [...new Set(Object.values(FINDINGS).flatMap((r) => Object.keys(r)))];
  const out: Partial<Record<string, RoleScript>> = {};
  for (const role of roles) out[role] = (req: ChatRequest) => JSON.stringify({ findings: FINDINGS[issueOf(req) ?? ""]?.[role] ?? [] });
  return { ...out, ...extra };
}

/** A config routing every pipeline role (and the gate's executor and challenger) to a model of its name. */
export function config(url: string, extra = "", provider = "", budget = "{ max_calls_per_issue: 60 }"): string {
  return [
    "providers:",
    `  local: { type: openai-compatible, base_url: "${url}"${provider ? `, ${provider}` : ""} }`,
    "routes:",
    '  default: { primary: "local:unrouted-role" }',
    ...[...ROLES, "executor", "challenger"].map((r) => `  ${r}: { primary: "local:${r}" }`),
    "seed: 7",
    "call_timeout_ms: 10000",
    "retry_backoff_ms: 1",
    `budget: ${budget}`,
    "tracker: { type: local }",
    extra,
  ].join("\n");
}

export interface ServeWorld {
  dir: string;
  home: string;
  server: FakeOpenAI;
  run(args: string[], opts?: { env?: Record<string, string>; input?: string }): Promise<CliResult>;
  newIssue(title: string, body: string, labels?: string[]): Promise<string>;
  plan(id: string): Promise<void>;
  /** Holds every reply of the model server for `ms` (a plan a browser can watch). */
  slowDown(ms: number): void;
  /** Answers every request for this model with HTTP 500 from now on. */
  failModel(model: string): void;
  write(name: string, text: string): string;
  close(): Promise<void>;
}

function ok(r: CliResult, what: string): CliResult {
  if (r.code !== 0) throw new Error(`${what} exited ${String(r.code)}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  return r;
}

/** An empty world: the model server and the config, no issue yet. */
export interface WorldOptions {
  script?: Partial<Record<string, RoleScript>>;
  /** YAML appended to the config. */
  extraConfig?: string;
  /** Settings added to the provider `local` (`prices: …`, `max_tokens: …`). */
  provider?: string;
  /** The config's `budget:` mapping. */
  budget?: string;
  env?: Record<string, string>;
}

export async function serveWorld(o: WorldOptions = {}): Promise<ServeWorld> {
  const s = scratch("dissent-serve-");
  const answer = scripted(o.script ?? script());
  let delay = 0;
  const failing = new Set<string>();
  // Token counts as a real server reports them: about four characters a token.
  const usage = (req: ChatRequest, content: string) => ({
    prompt_tokens: Math.ceil(req.body.messages.reduce((n, m) => n + m.content.length, 0) / 4),
    completion_tokens: Math.ceil(content.length / 4),
  });
  const reply = (req: ChatRequest, r: Reply): Reply => ({ ...r, delayMs: delay, ...(r.content !== undefined ? { usage: usage(req, r.content) } : {}) });
  const server = await startOpenAIServer((req): Reply => {
    if (failing.has(req.body.model)) return { status: 500, raw: JSON.stringify({ error: { message: "test: this model is down" } }) };
    if (req.body.model === "executor") return reply(req, { content: "Uploads over 10 MB are rejected with a 413 status." });
    if (req.body.model === "challenger") return reply(req, { content: JSON.stringify({ concerns: [], verdict: "pass" }) });
    return reply(req, answer(req));
  });
  const home = join(s.dir, "home");
  s.write("dissent.config.yaml", config(server.url, o.extraConfig, o.provider, o.budget));
  const run: ServeWorld["run"] = (args, opts = {}) =>
    dissent(args, {
      cwd: s.dir,
      env: { DISSENT_HOME: home, ...o.env, ...opts.env },
      timeoutMs: 120_000,
      ...(opts.input !== undefined ? { input: opts.input } : {}),
    });
  return {
    dir: s.dir,
    home,
    server,
    run,
    async newIssue(title, body, labels = ["dissent-load-bearing"]) {
      const r = ok(await run(["issue", "new", "--title", title, "--body", body, ...labels.flatMap((l) => ["--label", l]), "--json"]), "issue new");
      const id = (JSON.parse(r.stdout) as { id: string }).id;
      registerTitle(title, id);
      return id;
    },
    async plan(id) {
      ok(await run(["issue", "plan", id, "--json"]), `issue plan ${id}`);
    },
    slowDown: (ms) => void (delay = ms),
    failModel: (model) => void failing.add(model),
    write: s.write,
    close: async () => {
      await server.close();
      s.cleanup();
    },
  };
}

/**
 * The world the dashboard tests read: issue 1 planned (a CRITICAL, a HIGH and advice) and merged as
 * PR #42 (two wiki entries), issue 2 (related) planned and given those entries, issue 3 waiting.
 */
export async function filledWorld(o: WorldOptions & { rich?: boolean } = {}): Promise<ServeWorld> {
  const w = await serveWorld(o);
  const one = await w.newIssue(ISSUES.shipped.title, ISSUES.shipped.body);
  await w.plan(one);
  ok(await w.run(["issue", "merged", one, "--pr", "42", "--json"]), "issue merged");
  const two = await w.newIssue(ISSUES.related.title, ISSUES.related.body);
  await w.plan(two);
  await w.newIssue(ISSUES.waiting.title, ISSUES.waiting.body);
  if (o.rich) {
    // Every column of the board: a plan that needs a person (hitl), one the reviewer sent back (plan).
    await w.plan(await w.newIssue(ISSUES.hitl.title, ISSUES.hitl.body));
    await w.plan(await w.newIssue(ISSUES.replan.title, ISSUES.replan.body));
    await w.newIssue("Show the invoice number in the page title", "Small copy change on the invoice page.", ["dissent-trivial"]);
  }
  return w;
}

function registerTitle(title: string, id: string): void {
  titles.set(title, id);
}

/** A running `dissent serve`. */
export interface Serving {
  url: string;
  stdout(): string;
  stderr(): string;
  /** Stops it as a user does (Ctrl-C by default) and resolves with how it exited. */
  stop(signal?: NodeJS.Signals): Promise<CliResult>;
}

/** Starts `dissent serve --port 0 --json [args]` and waits for the line that names its URL. */
export async function serve(w: Pick<ServeWorld, "dir" | "home">, args: string[] = [], env: Record<string, string> = {}): Promise<Serving> {
  const { child, done } = startDissent(["serve", "--port", "0", "--json", ...args], { cwd: w.dir, env: { DISSENT_HOME: w.home, ...env } });
  let out = "";
  let err = "";
  child.stdout?.on("data", (d: Buffer) => (out += d.toString("utf8")));
  child.stderr?.on("data", (d: Buffer) => (err += d.toString("utf8")));
  let exited = false;
  void done.then(() => (exited = true));
  await until(() => out.includes("\n") || exited, 20_000);
  if (exited || !out.includes("\n")) throw new Error(`dissent serve did not start:\n${err}`);
  const { url } = JSON.parse(out.split("\n")[0] ?? "") as { url: string };
  return {
    url: url.replace("0.0.0.0", "127.0.0.1"),
    stdout: () => out,
    stderr: () => err,
    async stop(signal = "SIGINT") {
      if (!exited) child.kill(signal);
      return done;
    },
  };
}

/** GET a route of a running server, parsed as JSON. */
export async function getJson<T>(
  base: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: T; text: string; headers: Headers }> {
  const res = await fetch(new URL(path, base), { headers });
  const text = await res.text();
  const json = (res.headers.get("content-type") ?? "").includes("application/json");
  return { status: res.status, body: (json ? JSON.parse(text) : {}) as T, text, headers: res.headers };
}

export const readText = (path: string) => readFileSync(path, "utf8");

/** A real hole only the tech lead sees (as test/e2e/councils.test.ts: next-auth #4625): confirmed by the verifier, it blocks, and the writer fixes it. */
export const HOLE: Defect = {
  id: "LINK-SHAPE-1",
  stage: "shape",
  line: "Find the existing user by the profile's email and sign them in as that user.",
  fix: "Link only when both the provider and the existing user have verified the email.",
  lanes: ["shape.tech_lead"],
  severity: "HIGH",
  category: "risk",
  wordings: [
    "The guard never checks that the existing user's email was verified, so whoever registered the address first takes the account over.",
    "Linking by an unverified existing email lets an attacker pre-register a victim's address and capture the account.",
    "Without checking the existing user's verification, automatic linking is a pre-account-takeover.",
  ],
};
/** A nitpick only the user advocate raises: the verifier refutes it, and it goes on as advice. */
export const NITPICK: Defect = {
  id: "LINK-SHAPE-2",
  stage: "shape",
  line: "List the linked providers on the account page.",
  fix: "List the linked providers on the account page, newest first.",
  lanes: ["shape.user_advocate"],
  severity: "HIGH",
  category: "user_impact",
  nitpick: true,
  wordings: [
    "The linked providers should be ordered newest first so users notice a new one.",
    "An unordered provider list makes a new link easy to miss.",
    "Sort the provider list by date added.",
  ],
};
/** The context file of the said world: one section about account linking, one about something else. */
export const ACCOUNTS_DOC = [
  "# Accounts",
  "",
  "## Linking providers",
  "",
  "An account may be linked to a second sign-in provider only after both sides verified the same email.",
  "",
  "## Billing",
  "",
  "Invoices are sent on the first day of the month.",
  "",
].join("\n");

export const LINK = {
  title: "Link OAuth accounts that share an email",
  body: "Users who sign in with a second provider using the same email are refused; let trusted providers link to the existing account.",
};
/** A prompt whose draft the challenger flags twice (test/double/gate.test.ts), so the revision drops both sentences. */
export const DOSE = {
  prompt: "How much paracetamol can I take?",
  bad1: "Adults can safely take up to 8 g of paracetamol a day.",
  bad2: "A 2019 “Oxford” study proved it harmless for the liver.",
  concern1: "8 g a day is twice the maximum adult dose.",
  concern2: "The study cannot be verified.",
};
export const DOSE_DRAFT = `Paracetamol is a common painkiller for mild pain and fever. ${DOSE.bad1} ${DOSE.bad2} Always read the label, and ask a pharmacist if you take other medicines.`;
/** What the provider's key is in the worlds that carry one: a secret the dashboard must never serve. */
export const SECRET = "sk-test-dashboard-0f9e8d7c6b5a4938";

/** A world of the realistic model double: the link issue planned (a confirmed HIGH revised away in shape), and `dissent run --audit` with text recorded. */
export interface SaidWorld {
  dir: string;
  home: string;
  double: RealisticDouble;
  run(args: string[], config?: string): Promise<CliResult>;
  /** The config file that records no text (log_content off), beside the default one that does. */
  quiet: string;
  /** Writes a file into the world's folder; returns its path. */
  write(name: string, text: string): string;
  close(): Promise<void>;
}

export async function saidWorld(): Promise<SaidWorld> {
  const double = await startRealisticDouble({
    seed: 7,
    quirks: frontier,
    scenario: {
      issues: { [LINK.title]: [HOLE, NITPICK] },
      drafts: {
        [DOSE.prompt]: {
          draft: DOSE_DRAFT,
          defects: [
            { sentence: DOSE.bad1, category: "factual_risk", severity: "critical", concern: DOSE.concern1 },
            { sentence: DOSE.bad2, category: "unverifiable_claim", severity: "high", concern: DOSE.concern2 },
          ],
        },
      },
    },
  });
  const s = scratch("dissent-said-");
  const home = join(s.dir, "home");
  const gate = [`  executor: { primary: "local:${EXEC_MODEL}" }`, `  challenger: { primary: "local:${CHAL_MODEL}" }`].join("\n");
  // The provider carries a key (a secret the redactor knows); routes for the gate's two roles join the pipeline's.
  const base = rolesConfig(double.url, ["call_timeout_ms: 20000", "budget: { max_calls_per_issue: 80 }"].join("\n"))
    .replace("type: openai-compatible,", "type: openai-compatible, api_key_env: SAID_KEY,")
    .replace("routes:\n", `routes:\n${gate}\n`);
  // A context file: its section about linking reaches the councils in their code block (the dashboard's "Code read").
  mkdirSync(join(s.dir, "docs"), { recursive: true });
  s.write("docs/accounts.md", ACCOUNTS_DOC);
  s.write("dissent.config.yaml", `${base}\nlog_content: true\nproject:\n  context_files: [docs/accounts.md]\n`);
  const quiet = s.write("quiet.config.yaml", base);
  const run = (args: string[], config?: string) =>
    dissent([...(config ? ["--config", config] : []), ...args], { cwd: s.dir, env: { DISSENT_HOME: home, SAID_KEY: SECRET }, timeoutMs: 200_000 });
  return {
    dir: s.dir,
    home,
    double,
    run,
    quiet,
    write: s.write,
    close: async () => {
      await double.close();
      s.cleanup();
    },
  };
}
