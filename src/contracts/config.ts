import { z } from "zod";

/** How to reach one provider. */
export const ProviderConfig = z
  .object({
    type: z.enum(["openai-compatible", "openai", "anthropic"]),
    base_url: z.string().url().optional(),
    /** Environment variable holding the API key; the key itself is never written in config. */
    api_key_env: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "must be an environment variable name").optional(),
    /** Send `response_format: json_schema` (true, default) or `json_object` (false) for structured replies. */
    structured_outputs: z.boolean().optional(),
  })
  .strict()
  .superRefine((p, ctx) => {
    if (p.type === "openai-compatible" && !p.base_url) {
      ctx.addIssue({ code: "custom", path: ["base_url"], message: "is required for type openai-compatible" });
    }
  });
export type ProviderConfig = z.infer<typeof ProviderConfig>;

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
      token_env: z.string().default("GITHUB_TOKEN"),
      base_url: z.string().url().optional(),
    })
    .strict(),
]);
export type TrackerConfig = z.infer<typeof TrackerConfig>;

/** The YAML config file, as written by a user. */
export const ConfigFile = z
  .object({
    home: z.string().optional(),
    providers: z.record(z.string().regex(/^[^:\s]+$/, "provider names may not contain ':'"), ProviderConfig).optional(),
    routes: z.record(z.string(), RouteConfig).optional(),
    seed: z.number().int().optional(),
    call_timeout_ms: z.number().int().positive().optional(),
    /** First transport-retry delay; doubles per retry unless Retry-After says otherwise. */
    retry_backoff_ms: z.number().int().min(0).optional(),
    policies: z.array(z.string()).optional(),
    constraints: z.array(z.string()).optional(),
    tracker: TrackerConfig.optional(),
    budget: z.object({ max_calls_per_issue: z.number().int().positive().optional() }).strict().optional(),
    wiki: z
      .object({
        max_entries: z.number().int().positive().optional(),
        max_chars: z.number().int().positive().optional(),
      })
      .strict()
      .optional(),
    log_content: z.boolean().optional(),
  })
  .strict();
export type ConfigFile = z.infer<typeof ConfigFile>;

/** The resolved configuration every command works from. */
export interface Config {
  /** Where the config came from (a path), or "defaults". */
  source: string;
  home: string;
  providers: Record<string, ProviderConfig>;
  routes: Record<string, RouteConfig>;
  seed: number;
  callTimeoutMs: number;
  retryBackoffMs: number;
  policies: string[];
  constraints: string[];
  tracker: TrackerConfig;
  budget: { maxCallsPerIssue: number };
  wiki: { maxEntries: number; maxChars: number };
  logContent: boolean;
}
