import type { LanguageModelV3 } from "@ai-sdk/provider";
import { loadConfig } from "../config/load.js";
import type { Config, ProviderConfig } from "../contracts/config.js";
import type { Located } from "../engines/llama-cpp/index.js";
import { codeOf, DissentError, messageOf } from "../errors.js";
import { keyEnvOf, needsKey, PROVIDERS, resolveHeaders } from "../models/providers.js";
import { capResponse, replyTooLarge } from "../models/reply-cap.js";
import { configRouter, parseTarget } from "../models/router.js";
import type { ModelTarget } from "../models/types.js";
import { redactor } from "../redact.js";
import { json, type Common } from "./common.js";
import type { Io } from "./io.js";
import { table } from "./table.js";
import { openStore } from "../store/open.js";
import { addPart, engineInstalled, OPT_IN_PARTS } from "../opt-in.js";

/** One configured route and what checking it found (docs/local-engine.md: reachable, key, model present, JSON mode). */
export interface RouteCheck {
  route: string;
  which: "primary" | "secondary";
  target: string;
  ok: boolean;
  /** What passed, in order, then what failed. */
  detail: string;
}

/** What checking one target (provider and model) found; shared by every route that names it. */
interface TargetCheck {
  ok: boolean;
  detail: string;
}

const HTTP_TIMEOUT_MS = 5000;

const errorLine = (e: unknown): string => {
  const code = networkCode(e);
  const m = messageOf(e).split("\n")[0] ?? "";
  if (code) return m.includes(code) ? m : `${m} (${code})`;
  // undici's "fetch failed" says why only in its cause ("bad port", "other side closed").
  const cause = (e as { cause?: unknown }).cause;
  return cause instanceof Error && cause.message && !m.includes(cause.message) ? `${m} (${cause.message.split("\n")[0] ?? ""})` : m;
};

function networkCode(e: unknown, depth = 0): string | undefined {
  if (!e || typeof e !== "object" || depth > 5) return undefined;
  const code = codeOf(e);
  if (typeof code === "string" && /^E[A-Z]+$|^UND_ERR/.test(code)) return code;
  return networkCode((e as { cause?: unknown }).cause, depth + 1);
}

/**
 * A signal that fires after `ms` or when `stop` does (Ctrl-C, SIGTERM). The combined signal is
 * returned, and the caller holds it for as long as the request runs: one that nothing references
 * may be collected before it fires.
 */
export function timeoutOr(ms: number, stop: AbortSignal | undefined): AbortSignal {
  const timeout = AbortSignal.timeout(ms);
  return stop ? AbortSignal.any([timeout, stop]) : timeout;
}

/** The stop's reason when it fired: a check cut short by Ctrl-C or SIGTERM is the interrupted run, not a failed check. */
function rethrowIfStopped(stop: AbortSignal | undefined): void {
  if (stop?.aborted) throw stop.reason;
}

/** GET a JSON listing, read no further than `limit` bytes (max_reply_bytes); its status, or the reason nothing answered. */
export async function getJson(
  url: string,
  headers: Record<string, string>,
  limit: number,
  stop?: AbortSignal,
): Promise<{ status: number; body: unknown } | { unreachable: string }> {
  const signal = timeoutOr(HTTP_TIMEOUT_MS, stop);
  try {
    const res = await fetch(url, { headers, signal });
    let text: string;
    try {
      text = await (await capResponse(res, limit)).text();
    } catch (e) {
      const cut = replyTooLarge(e);
      if (!cut) throw e;
      return { status: res.status, body: undefined }; // a listing beyond the cap is no listing: presence is not checked
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch (e) {
      if (!(e instanceof SyntaxError)) throw e; // not JSON: the status says enough
    }
    return { status: res.status, body };
  } catch (e) {
    rethrowIfStopped(stop);
    return { unreachable: (e as Error).name === "TimeoutError" ? `no answer in ${HTTP_TIMEOUT_MS / 1000} s` : errorLine(e) };
  }
}

/** Model ids in an OpenAI-style (`data[].id`) or Ollama-style (`models[].name`) listing. */
export function modelIds(body: unknown): string[] | undefined {
  const data = (body as { data?: unknown })?.data;
  if (Array.isArray(data)) return data.flatMap((m) => (typeof (m as { id?: unknown }).id === "string" ? [(m as { id: string }).id] : []));
  const models = (body as { models?: unknown })?.models;
  if (Array.isArray(models)) return models.flatMap((m) => (typeof (m as { name?: unknown }).name === "string" ? [(m as { name: string }).name] : []));
  return undefined;
}

/** Is `model` in the listing (an alias such as claude-sonnet-4-5 matches its dated ids; qwen3 matches qwen3:latest)? */
const listed = (ids: readonly string[], model: string) => ids.some((id) => id === model || id.startsWith(`${model}-`) || id === `${model}:latest`);

/** Reachable, key accepted, model present — for a provider reached over HTTP. */
async function checkRemote(
  p: ProviderConfig,
  model: string,
  key: string | undefined,
  headers: Record<string, string>,
  keyHint: string | undefined,
  limit: number,
  stop: AbortSignal | undefined,
): Promise<TargetCheck> {
  const base = ("base_url" in p && p.base_url ? p.base_url : PROVIDERS[p.type].defaultUrl).replace(/\/+$/, "");
  const auth: Record<string, string> =
    p.type === "anthropic" ? { ...(key ? { "x-api-key": key } : {}), "anthropic-version": "2023-06-01" } : key ? { authorization: `Bearer ${key}` } : {};
  const got = await getJson(`${base}/models`, { ...auth, ...headers }, limit, stop);
  if ("unreachable" in got) return { ok: false, detail: `unreachable: ${base} (${got.unreachable})` };
  if (got.status === 401 || got.status === 403)
    return { ok: false, detail: `reachable · the key was refused (${got.status})${keyHint ? `: check ${keyHint}` : ""}` };
  let ids = got.status === 200 ? modelIds(got.body) : undefined;
  if (!ids && p.type === "openai-compatible") {
    // Ollama's own listing, when its OpenAI-compatible one is missing.
    const tags = await getJson(`${base.replace(/\/v1$/, "")}/api/tags`, headers, limit, stop);
    if (!("unreachable" in tags) && tags.status === 200) ids = modelIds(tags.body);
  }
  if (!ids) return { ok: true, detail: `reachable (no model listing: presence not checked, status ${got.status})` };
  if (!listed(ids, model)) {
    const some = ids.slice(0, 5).join(", ");
    return { ok: false, detail: `reachable · model '${model}' not found at ${base} (it has ${ids.length ? `${some}${ids.length > 5 ? ", …" : ""}` : "none"})` };
  }
  return { ok: true, detail: "reachable · model present" };
}

/** The one-token structured probe: does a JSON-mode request come back (a reply cut at one token is fine)? */
async function probeJson(target: ModelTarget, timeoutMs: number, stop: AbortSignal | undefined): Promise<TargetCheck> {
  let model: Awaited<ReturnType<ModelTarget["load"]>>;
  try {
    model = await target.load();
  } catch (e) {
    rethrowIfStopped(stop);
    return { ok: false, detail: errorLine(e) };
  }
  if (typeof model !== "object" || model.specificationVersion !== "v3") return { ok: false, detail: "JSON mode not checked (not an AI SDK v3 model)" };
  const v3 = model as LanguageModelV3;
  const schema = { type: "object" as const, properties: { ok: { type: "boolean" as const } }, required: ["ok"], additionalProperties: false };
  const mode = target.structured;
  const signal = timeoutOr(timeoutMs, stop);
  try {
    await v3.doGenerate({
      prompt: [
        { role: "system", content: 'Reply with the JSON object {"ok": true}.' },
        { role: "user", content: [{ type: "text", text: "Ready?" }] },
      ],
      maxOutputTokens: 1,
      temperature: 0,
      ...(mode === "prompt" ? {} : { responseFormat: mode === "json_object" ? { type: "json" as const } : { type: "json" as const, schema, name: "probe" } }),
      providerOptions: { openai: { strictJsonSchema: false }, openaiCompatible: { strictJsonSchema: false } },
      abortSignal: signal,
    });
    const what = mode === "grammar" ? "JSON mode ok (grammar)" : mode === "prompt" ? "JSON by prompt (one-token reply ok)" : `JSON mode ok (${mode})`;
    return { ok: true, detail: what };
  } catch (e) {
    rethrowIfStopped(stop);
    const status = (e as { statusCode?: unknown }).statusCode;
    return { ok: false, detail: `JSON-mode request failed${typeof status === "number" ? ` (${status})` : ""}: ${errorLine(e)}` };
  }
}

/**
 * Checks every configured route; targets named by several routes are checked once. `stop` (Ctrl-C,
 * SIGTERM) ends every check at once — requests, model loads, the hash of a multi-GB model — and
 * is thrown as its reason; `say` hears the engine's notices (a big model hashed once).
 */
export async function checkConfiguredRoutes(
  config: Config,
  env: Record<string, string | undefined>,
  o: { stop?: AbortSignal; say?: (text: string) => void } = {},
): Promise<{ rows: RouteCheck[]; dispose(): Promise<void> }> {
  const { stop } = o;
  const local = Object.values(config.providers).some((p) => p.type === "llama-cpp");
  const engineModule = local ? await import("../engines/llama-cpp/index.js") : undefined;
  const engines = engineModule?.createLlamaEngines({
    config,
    env,
    reporter: o.say ? engineModule.streamReporter({ write: o.say }) : engineModule.silentReporter,
    ...(o.say ? { warn: (m: string) => o.say?.(`dissent: warning: ${m.split("\n")[0] ?? ""}\n`) } : {}),
    ...(stop ? { signal: stop } : {}),
  });
  const routerConfig = engineModule ? engineModule.withEngineLimits(config) : config;
  const router = configRouter(routerConfig, env, {}, engines ? { create: engines.create, identity: engines.identity } : {});
  const checks = new Map<string, Promise<TargetCheck>>();
  const timeoutMs = Math.min(config.callTimeoutMs, 120_000);

  const checkTarget = async (role: string, which: "primary" | "secondary", spec: string): Promise<TargetCheck> => {
    const { provider, model } = parseTarget(spec);
    const p = config.providers[provider];
    if (!p) return { ok: false, detail: `unknown provider '${provider}'` };
    const parts: string[] = [];
    if (p.type === "llama-cpp") {
      if (!engines) return { ok: false, detail: "llama-cpp engine unavailable" };
      if (!engineInstalled()) return { ok: false, detail: `node-llama-cpp is not installed: ${addPart(OPT_IN_PARTS.engine)}` };
      let located: Located;
      try {
        located = engines.locate(provider, p, model);
      } catch (e) {
        return { ok: false, detail: errorLine(e) };
      }
      if (!located.present) {
        return located.ref.kind === "hf"
          ? {
              ok: false,
              detail: `${located.ref.uri} not downloaded yet: the first run downloads it${config.offline ? " (but offline is set)" : ""}, or place it at ${located.path}`,
            }
          : { ok: false, detail: `model file not found: ${located.path}` };
      }
      const problem = engineModule?.modelFileProblem(located.path, `providers.${provider}`);
      if (problem) return { ok: false, detail: problem.message };
      parts.push(`model file present (${located.path})`);
      // The reply cache is keyed by the file's content: hashed here as a stream the signal stops, before routing needs it.
      await engines.hash([{ name: provider, p, model }]);
    } else {
      const keyEnv = keyEnvOf(p);
      const key = keyEnv ? env[keyEnv] || undefined : undefined;
      if (!key && keyEnv && needsKey(p)) return { ok: false, detail: `no API key: set ${keyEnv}` };
      if (key) parts.push(`key ${keyEnv} set`);
      let headers: Record<string, string>;
      try {
        headers = resolveHeaders(provider, p, env, config.source).headers;
      } catch (e) {
        return { ok: false, detail: errorLine(e) };
      }
      const remote = await checkRemote(p, model, key, headers, keyEnv, p.max_reply_bytes ?? config.maxReplyBytes, stop);
      parts.push(remote.detail);
      if (!remote.ok) return { ok: false, detail: parts.join(" · ") };
    }
    const route = router(role);
    const target = which === "secondary" ? route.secondary : route.primary;
    if (!target) return { ok: false, detail: `${parts.join(" · ")} · no ${which} route` };
    const probe = await probeJson(target, timeoutMs, stop);
    parts.push(probe.detail);
    return { ok: probe.ok, detail: parts.join(" · ") };
  };

  const rows: Promise<RouteCheck>[] = [];
  for (const [role, r] of Object.entries(config.routes)) {
    for (const [which, spec] of [
      ["primary", r.primary],
      ["secondary", r.secondary],
    ] as const) {
      if (!spec) continue;
      let c = checks.get(spec);
      if (!c) {
        c = checkTarget(role, which, spec).catch((e: unknown) => {
          rethrowIfStopped(stop);
          return { ok: false, detail: DissentError.isInstance(e) ? messageOf(e) : `check failed: ${errorLine(e)}` };
        });
        checks.set(spec, c);
      }
      rows.push(c.then((t) => ({ route: role, which, target: spec, ok: t.ok, detail: t.detail })));
    }
  }
  try {
    return { rows: await Promise.all(rows), dispose: async () => engines?.dispose() };
  } catch (e) {
    // Stopped: every other check ends on the same signal; the engines' models are freed before the reason is thrown.
    await Promise.allSettled(rows);
    await engines?.dispose();
    throw e;
  }
}

/** Routes whose check found the same thing for the same target: one table row (`--json` keeps one per route). */
interface RowGroup {
  routes: string[];
  target: string;
  ok: boolean;
  detail: string;
}

/** Groups rows with equal target, status and checks, in the order their first route appears. */
export function groupRows(rows: readonly RouteCheck[]): RowGroup[] {
  const groups = new Map<string, RowGroup>();
  for (const r of rows) {
    const name = r.which === "primary" ? r.route : `${r.route} (secondary)`;
    const key = JSON.stringify([r.target, r.ok, r.detail]);
    const g = groups.get(key);
    if (g) g.routes.push(name);
    else groups.set(key, { routes: [name], target: r.target, ok: r.ok, detail: r.detail });
  }
  return [...groups.values()];
}

/** A group's routes as one cell: up to three by name, else the first and how many more. */
const routesCell = (g: RowGroup): string => (g.routes.length <= 3 ? g.routes.join(", ") : `${g.routes[0]} and ${g.routes.length - 1} more`);

/** What `doctor` says of the repository the councils read (docs/local-engine.md), when the config names one. */
export interface RepositoryCheck {
  where: string;
  ok: boolean;
  detail: string;
  commit?: string | null;
  files?: number;
  languages?: Record<string, number>;
  skipped?: Record<string, number>;
  built_at?: string;
  from_cache?: boolean;
}

/** "3 h ago", "just now": how old a map is. */
function age(builtAt: string, now: number): string {
  const s = Math.max(0, Math.round((now - Date.parse(builtAt)) / 1000));
  if (s < 60) return "just now";
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  if (s < 86_400) return `${Math.round(s / 3600)} h ago`;
  return `${Math.round(s / 86_400)} d ago`;
}

/** Maps the configured repository (through the store's code index, so a mapped commit is read back, not parsed). */
async function checkRepository(config: Config, io: Io): Promise<RepositoryCheck | undefined> {
  const src = config.code.source;
  if (!src) return undefined;
  const where = src.kind === "local" ? src.root : `${src.repo} (GitHub)`;
  const { codeContextFor } = await import("../code/for-config.js");
  const store = await openStore(config, { env: io.env, redact: io.redact, signal: io.signal }).catch(() => undefined);
  let warned = "";
  try {
    const tracker =
      src.kind === "github" && config.tracker.type === "github"
        ? (await import("../trackers/github.js")).githubTracker(config.tracker, io.env, config.source, { signal: io.signal })
        : undefined;
    const map = await codeContextFor(config, {
      signal: io.signal,
      ...(store ? { cache: store.codeIndex } : {}),
      ...(tracker ? { tracker } : {}),
      warn: (m) => {
        warned = m;
      },
    });
    if (!map) return { where, ok: false, detail: warned || "not mapped" };
    const langs = Object.entries(map.languages)
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
      .slice(0, 4)
      .map(([l, n]) => `${l} ${n}`)
      .join(", ");
    const skipped = Object.entries(map.skipped).filter(([, n]) => n > 0);
    const built = map.fromCache ? `map from ${age(map.builtAt, Date.now())} (in the store)` : `map built now (${map.parsed} files parsed)`;
    return {
      where: map.where,
      ok: true,
      detail: `${map.files} files (${langs || "none"})${skipped.length ? `, skipped ${skipped.map(([k, n]) => `${n} ${k.replace("_", " ")}`).join(", ")}` : ""}; ${built}${map.commit ? `; at ${map.commit.slice(0, 12)}${map.dirty ? " with changes" : ""}` : ""}`,
      commit: map.commit,
      files: map.files,
      languages: map.languages,
      skipped: { ...map.skipped },
      built_at: map.builtAt,
      from_cache: map.fromCache,
    };
  } catch (e) {
    rethrowIfStopped(io.signal);
    return { where, ok: false, detail: messageOf(e).split("\n")[0] ?? "" };
  } finally {
    await store?.close();
  }
}

/** `dissent doctor`: one row per configured route, and one for the repository; exit 1 if any fails (docs/local-engine.md). */
export async function doctorCommand(flags: Common, io: Io): Promise<number> {
  const config = loadConfig({ ...(flags.config ? { flag: flags.config } : {}), env: io.env, cwd: io.cwd });
  io.redact = redactor(config.secrets); // a key echoed in a server's error never reaches the terminal
  const { rows, dispose } = await checkConfiguredRoutes(config, io.env, { stop: io.signal, say: io.stderr });
  await dispose();
  rethrowIfStopped(io.signal);
  const repository = await checkRepository(config, io);
  const ok = rows.every((r) => r.ok) && (repository?.ok ?? true);
  if (flags.json) {
    json(io, { config: config.source, ok, routes: rows, ...(repository ? { repository } : {}) });
  } else {
    io.stdout(`config: ${config.source}\n`);
    io.stdout(
      table(
        ["ROUTE", "TARGET", "STATUS", "CHECKS"],
        [
          ...groupRows(rows).map((g) => [routesCell(g), g.target, g.ok ? "ok" : "FAIL", g.detail]),
          ...(repository ? [["repository", repository.where, repository.ok ? "ok" : "FAIL", repository.detail]] : []),
        ],
      ),
    );
  }
  return ok ? 0 : 1;
}
