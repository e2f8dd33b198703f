import { z } from "zod";
import { SEVERITIES, type Severity } from "./concern.js";

const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "must be an environment variable name");

/** Per-token prices in USD per million tokens (docs/serve.md); local models: 0. */
export const Prices = z
  .object({
    input_per_mtok: z.number().min(0).max(1e6),
    output_per_mtok: z.number().min(0).max(1e6),
    /** Input tokens read from the provider's prompt cache (docs/serve.md "Cost"); default `input_per_mtok`. */
    cached_input_per_mtok: z.number().min(0).max(1e6).optional(),
    /** Input tokens written to the provider's prompt cache (Anthropic); default `input_per_mtok`. */
    cache_write_per_mtok: z.number().min(0).max(1e6).optional(),
  })
  .strict();
export type Prices = z.infer<typeof Prices>;

/** What every provider type may set (docs/configuration.md). */
const common = {
  /** Environment variable holding the API key; the key itself is never written in config. */
  api_key_env: envName.optional(),
  /** Send `response_format: json_schema` (true, default) or `json_object` (false) for structured replies. */
  structured_outputs: z.boolean().optional(),
  /** Requests in flight at once to this provider, across every role and issue of the process; default unlimited. */
  max_concurrency: z.number().int().min(1).max(10_000).optional(),
  /** Upper bound on reply tokens sent with every request. */
  max_tokens: z.number().int().min(1).max(10_000_000).optional(),
  /** Extra HTTP headers; a value may name an env variable as ${VAR} (then it is a secret, like a key). */
  headers: z.record(z.string().regex(/^[A-Za-z0-9-]+$/, "header names are letters, digits and '-'"), z.string()).optional(),
  /** Merged into the request body (e.g. Ollama's `options`). */
  extra_body: z.record(z.string(), z.unknown()).optional(),
  prices: Prices.optional(),
  /** The most bytes a reply may take as it arrives (streamed or not); beyond it the call fails as reply_too_large (docs/limits.md). */
  max_reply_bytes: z.number().int().min(1024).max(1_073_741_824).optional(),
};

/** How to reach one provider. */
export const ProviderConfig = z.discriminatedUnion("type", [
  z.object({ type: z.literal("openai-compatible"), base_url: z.string().url(), ...common }).strict(),
  z.object({ type: z.literal("openai"), base_url: z.string().url().optional(), ...common }).strict(),
  z.object({ type: z.literal("anthropic"), base_url: z.string().url().optional(), ...common }).strict(),
  z
    .object({
      type: z.literal("llama-cpp"),
      /** `hf:<user>/<repo>:<quant>` or a path to a `.gguf` file (relative to the config file). */
      model: z.string().min(1).optional(),
      context_size: z.number().int().min(64).max(1_048_576).optional(),
      threads: z.number().int().min(1).max(1024).optional(),
      gpu: z.union([z.literal("auto"), z.literal(false)]).optional(),
      ...common,
    })
    .strict(),
]);
export type ProviderConfig = z.infer<typeof ProviderConfig>;
export type ProviderType = ProviderConfig["type"];

const RouteTarget = z.string().regex(/^[^:\s]+:\S+$/, 'must look like "provider:model"');

/** A role's route: primary, and a secondary tried only when the primary cannot be reached. */
export const RouteConfig = z.object({ primary: RouteTarget, secondary: RouteTarget.optional() }).strict();
export type RouteConfig = z.infer<typeof RouteConfig>;

export const TrackerConfig = z.discriminatedUnion("type", [
  z.object({ type: z.literal("local") }).strict(),
  z
    .object({
      type: z.literal("github"),
      repo: z.string().regex(/^[^/\s]+\/[^/\s]+$/, 'must look like "owner/name"'),
      token_env: envName.default("GITHUB_TOKEN"),
      base_url: z.string().url().optional(),
      /** The most bytes one GitHub reply may take as it arrives (default 32 MiB; docs/limits.md). */
      max_reply_bytes: z.number().int().min(65_536).max(1_073_741_824).optional(),
    })
    .strict(),
]);
export type TrackerConfig = z.infer<typeof TrackerConfig>;

/** Where state lives (docs/factory.md): the embedded SQLite file under the home, or one PostgreSQL database. */
export const StoreConfig = z.discriminatedUnion("type", [
  z.object({ type: z.literal("sqlite") }).strict(),
  z
    .object({
      type: z.literal("postgres"),
      url_env: envName.default("DISSENT_DATABASE_URL"),
      /** The longest one statement of the store may take (default 60 s; docs/limits.md): a hung database never holds a plan forever. */
      statement_timeout_ms: z.number().int().min(100).max(86_400_000).optional(),
    })
    .strict(),
]);
export type StoreConfig = z.infer<typeof StoreConfig>;

/** The `implement:` section (docs/implement.md, docs/configuration.md). */
export const ImplementFile = z
  .object({
    /** A local git checkout of the project (relative to the config file); its base branch is the starting point. */
    repo: z.string().min(1).default("."),
    base_branch: z
      .string()
      .regex(/^(?!-)[A-Za-z0-9._/-]{1,200}$/, "must be a branch name")
      .default("main"),
    /** The git remote branches are pushed to when a pull request is opened. */
    remote: z
      .string()
      .regex(/^(?!-)[A-Za-z0-9._-]{1,100}$/, "must be a remote name")
      .default("origin"),
    /** The coding agent, run through `sh -c` in the worktree; the task is on stdin and in $DISSENT_TASK_FILE. */
    command: z.string().min(1).max(8192),
    /** Run in the worktree after every attempt; exit 0 is a pass. */
    test_command: z.string().min(1).max(8192).optional(),
    attempt_timeout_ms: z.number().int().min(1000).max(86_400_000).default(1_800_000),
    test_timeout_ms: z.number().int().min(1000).max(86_400_000).default(600_000),
    /** The only variables of dissent's environment the agent and the tests see, besides PATH, HOME and LANG. */
    env: z.array(envName).max(100).default([]),
    /** How the agent and its tests are contained (docs/implement.md#safety): bubblewrap where it works (auto), bubblewrap, or none. */
    sandbox: z.enum(["auto", "bubblewrap", "none"]).default("auto"),
    /** Under bubblewrap: false cuts the agent's network (it keeps its own loopback). */
    network: z.boolean().default(true),
    /** Under bubblewrap: paths the agent may write besides its clone and a private /tmp (its own state, say `~/.claude`). */
    writable: z.array(z.string().min(1).max(4096)).max(50).default([]),
    /** Under bubblewrap: paths the agent may read that the sandbox would hide (under /tmp, say: the agent's own script), read-only. */
    readable: z.array(z.string().min(1).max(4096)).max(50).default([]),
    /** Agents at once, in the factory. */
    max_concurrency: z.number().int().min(1).max(64).default(1),
    /** Push the branch and open a pull request (GitHub tracker). */
    open_pr: z.boolean().default(true),
    /** Agent attempts over an issue's whole life (every `issue implement` counted). */
    max_attempts_per_issue: z.number().int().min(1).max(1000).default(8),
    /** Agent wall time over an issue's whole life, in ms. */
    max_agent_ms_per_issue: z
      .number()
      .int()
      .min(1000)
      .max(7 * 86_400_000)
      .default(14_400_000),
  })
  .strict();
export type ImplementFile = z.infer<typeof ImplementFile>;

/** The resolved `implement:` section: paths absolute. */
export interface ImplementConfig {
  repo: string;
  baseBranch: string;
  remote: string;
  command: string;
  testCommand: string | null;
  attemptTimeoutMs: number;
  testTimeoutMs: number;
  env: string[];
  sandbox: "auto" | "bubblewrap" | "none";
  network: boolean;
  /** Absolute paths (`~` and relative paths resolved). */
  writable: string[];
  /** Absolute paths (`~` and relative paths resolved), read-only for the agent. */
  readable: string[];
  maxConcurrency: number;
  openPr: boolean;
  maxAttemptsPerIssue: number;
  maxAgentMsPerIssue: number;
}

/** `review:` resolved: what becomes an inline comment, and the review's event (docs/configuration.md). */
export interface ReviewSettings {
  inlineMinSeverity: Severity;
  event: "COMMENT" | "REQUEST_CHANGES";
}

/** The least budget a load-bearing issue needs: the gate call, one round of every stage (5+5+5+2) and the reviewer. */
export const MIN_CALLS_PER_ISSUE = 19;

/** The YAML config file, as written by a user. */
export const ConfigFile = z
  .object({
    home: z.string().optional(),
    providers: z.record(z.string().regex(/^[^:\s]+$/, "provider names may not contain ':'"), ProviderConfig).optional(),
    routes: z.record(z.string(), RouteConfig).optional(),
    seed: z.number().int().min(-2_147_483_648).max(2_147_483_647).optional(),
    /** Bounds each attempt of each call; at most 24 h. */
    call_timeout_ms: z.number().int().min(1).max(86_400_000).optional(),
    /** First transport-retry delay; doubles per retry unless Retry-After says otherwise. */
    retry_backoff_ms: z.number().int().min(0).max(600_000).optional(),
    policies: z.array(z.string()).optional(),
    constraints: z.array(z.string()).optional(),
    tracker: TrackerConfig.optional(),
    store: StoreConfig.optional(),
    budget: z
      .object({
        /** Network calls over an issue's whole life, every planning cycle counted (docs/configuration.md). */
        max_calls_per_issue: z.number().int().min(1).max(1_000_000).optional(),
        max_usd_per_issue: z.number().positive().max(1e9).optional(),
        /** Planning cycles an issue may have (a replan is a new cycle). */
        max_cycles_per_issue: z.number().int().min(1).max(1000).optional(),
      })
      .strict()
      .optional(),
    /** What every pipeline role is told about the project the issue belongs to (docs/configuration.md). */
    project: z
      .object({
        name: z.string().min(1).max(200).optional(),
        description: z.string().max(4000).optional(),
        /** Files read into the project block (paths relative to the config file; each at most 64 KiB). */
        context_files: z.array(z.string().min(1)).max(16).optional(),
        /**
         * The repository the issues are about (docs/configuration.md): a local checkout (relative to the config
         * file), or false for none. Unset: implement.repo when there is an implement: section, else the GitHub
         * tracker's repository read through the API, else none.
         */
        repo: z.union([z.string().min(1).max(4096), z.literal(false)]).optional(),
      })
      .strict()
      .optional(),
    /** The code each request carries (docs/configuration.md, docs/issue.md "The code the councils read"). */
    context: z
      .object({
        /** Tokens of code per request (estimateTokens: characters ÷ 4); 0 sends none. */
        budget_tokens: z.number().int().min(0).max(200_000).optional(),
        /** Per-role budgets: a role or a dotted prefix of one (`plan` covers `plan.builder`), most specific first. */
        roles: z.record(z.string(), z.number().int().min(0).max(200_000)).optional(),
        /** The repository map's bounds (docs/limits.md). */
        map: z
          .object({
            max_files: z.number().int().min(1).max(100_000).optional(),
            max_file_bytes: z
              .number()
              .int()
              .min(1024)
              .max(16 * 1024 * 1024)
              .optional(),
            max_total_bytes: z
              .number()
              .int()
              .min(1024 * 1024)
              .max(1024 * 1024 * 1024)
              .optional(),
            parse_ms: z.number().int().min(10).max(60_000).optional(),
          })
          .strict()
          .optional(),
      })
      .strict()
      .optional(),
    wiki: z
      .object({
        max_entries: z.number().int().positive().max(1000).optional(),
        max_chars: z.number().int().positive().max(1_000_000).optional(),
      })
      .strict()
      .optional(),
    factory: z
      .object({
        poll_interval_s: z.number().positive().max(86_400).optional(),
        concurrency: z.number().int().min(1).max(256).optional(),
        max_attempts: z.number().int().min(1).max(100).optional(),
        /** Also implement `dissent-ready` issues (needs `implement:`; docs/factory.md). */
        implement: z.boolean().optional(),
      })
      .strict()
      .optional(),
    /** `dissent issue implement` (docs/implement.md): a coding agent in a worktree, its diff reviewed, a pull request. */
    implement: ImplementFile.optional(),
    telemetry: z
      .object({ otlp_endpoint: z.string().url().optional(), service_name: z.string().min(1).optional() })
      .strict()
      .optional(),
    /** Where llama-cpp models are downloaded to (default ~/.cache/dissent/models). */
    models_dir: z.string().optional(),
    /** Never download a model (also DISSENT_OFFLINE=1). */
    offline: z.boolean().optional(),
    log_content: z.boolean().optional(),
    /** `dissent serve` (docs/serve.md, docs/limits.md): how many live-stream clients at once, and what the server holds unsent for each. */
    serve: z
      .object({
        max_clients: z.number().int().min(1).max(100_000).optional(),
        client_buffer_bytes: z.number().int().min(65_536).max(1_073_741_824).optional(),
        /** The price the dashboard estimates calls of unknown price at ("provider:model" of the price table), or false for none. */
        estimate_at: z
          .union([z.string().regex(/^[^:\s]+:\S+$/, 'give "provider:model" of the price table, e.g. openai:gpt-4o-mini'), z.literal(false)])
          .optional(),
        /** Where people reach the dashboard (`https://dissent.example.com`): the check on a pull request links to the issue's page there. */
        public_url: z
          .string()
          .url()
          .max(2000)
          .regex(/^https?:\/\//, "must be an http(s) URL")
          .optional(),
      })
      .strict()
      .optional(),
    /** The review on the pull request (docs/implement.md "On the pull request"): what becomes an inline comment, and the review's event. */
    review: z
      .object({
        /** The least severity of a finding placed as an inline comment on its line; the rest are listed in the review's body. */
        inline_min_severity: z.enum(SEVERITIES).optional(),
        /** COMMENT, or REQUEST_CHANGES while a finding blocks (never APPROVE); GitHub refuses a change request on the token's own pull request — then COMMENT. */
        event: z.enum(["COMMENT", "REQUEST_CHANGES"]).optional(),
      })
      .strict()
      .optional(),
    /** Every provider's `max_reply_bytes` unless it sets its own (default 8 MiB). */
    max_reply_bytes: z.number().int().min(1024).max(1_073_741_824).optional(),
    /** `dissent mcp` (docs/mcp.md). */
    mcp: z
      .object({
        /** The largest message a client may send: one stdio line, or one HTTP request body (default 8 MiB). */
        max_message_bytes: z.number().int().min(1024).max(1_073_741_824).optional(),
      })
      .strict()
      .optional(),
  })
  .strict();
export type ConfigFile = z.infer<typeof ConfigFile>;

/** The project an issue belongs to, as the config names it (the GitHub tracker fills in what is missing). */
export interface ProjectContext {
  name: string | null;
  description: string | null;
  /** `context_files`, read at load: the path as written and the file's text. */
  files: { path: string; text: string }[];
}

/** The repository the councils read (docs/issue.md "The code the councils read"), resolved: a local checkout or a GitHub repository. */
export type CodeSourceConfig = { kind: "local"; root: string } | { kind: "github"; repo: string };

/** `project.repo` and `context:` resolved (docs/configuration.md). */
export interface CodeConfig {
  /** The repository, or null when none is configured (then no request carries code). */
  source: CodeSourceConfig | null;
  /** `context.budget_tokens` (default 6000). */
  budgetTokens: number;
  /** `context.roles`, as written. */
  roles: Record<string, number>;
  /** A role's budget: its `context.roles` entry, else its nearest dotted prefix's, else `budgetTokens` (`plan.builder` → `plan` → default). */
  budgetFor(role: string): number;
  /** `context.map.*` (docs/limits.md). */
  limits: { maxFiles: number; maxFileBytes: number; maxTotalBytes: number; parseMs: number };
}

/** The resolved configuration every command works from. */
export interface Config {
  /** Where the config came from (a path), or "defaults". */
  source: string;
  /** The folder relative paths in the config are resolved against. */
  baseDir: string;
  home: string;
  providers: Record<string, ProviderConfig>;
  routes: Record<string, RouteConfig>;
  seed: number;
  callTimeoutMs: number;
  retryBackoffMs: number;
  policies: string[];
  constraints: string[];
  tracker: TrackerConfig;
  store: StoreConfig;
  budget: { maxCallsPerIssue: number; maxUsdPerIssue: number | null; maxCyclesPerIssue: number };
  /** The project context given to every pipeline role; empty when the config names none. */
  project: ProjectContext;
  wiki: { maxEntries: number; maxChars: number };
  factory: { pollIntervalS: number; concurrency: number; maxAttempts: number; implement: boolean };
  /** `implement:`, or null when the config has none (docs/implement.md). */
  implement: ImplementConfig | null;
  /** The repository the councils read and the code budget (`project.repo`, `context:`). */
  code: CodeConfig;
  telemetry: { otlpEndpoint: string | null; serviceName: string };
  modelsDir: string;
  offline: boolean;
  logContent: boolean;
  /** `serve:` — the event stream's bounds (docs/limits.md); `publicUrl`, where people reach the dashboard (null: unset). */
  serve: { maxClients: number; clientBufferBytes: number; estimateAt: string | null; publicUrl: string | null };
  /** `review:` — the review dissent posts on a pull request (docs/implement.md). */
  review: ReviewSettings;
  /** `max_reply_bytes` for providers that set none (docs/limits.md). */
  maxReplyBytes: number;
  /** `dissent mcp`: the largest message a client may send (`mcp.max_message_bytes`, docs/limits.md). */
  mcp: { maxMessageBytes: number };
  /** Every secret the config names (provider keys, secret headers, tracker token, database URL): redacted at every sink. */
  secrets: string[];
}
