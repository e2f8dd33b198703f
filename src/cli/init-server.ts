import { UsageError } from "../errors.js";
import { getJson, modelIds } from "./doctor.js";

/**
 * `dissent init --base-url URL [--model M]` (docs/local-engine.md#an-openai-compatible-server): an
 * OpenAI-compatible server of the user's own — vLLM, LM Studio, llama.cpp's server, a gateway — named
 * by its URL, asked for its models (`GET …/models`) when it answers, and the drafting and judging
 * models picked from two families where it serves two.
 */
export interface ServerFound {
  kind: "server";
  /** The base URL as the config will hold it (`…/v1` when only that path answered). */
  url: string;
  executor: string;
  challenger: string;
  /** The chat models it listed; undefined when it could not be asked (then `unreached` says why). */
  models: string[] | undefined;
  unreached?: string;
}

/** A listing of models is read up to this size (a gateway may list hundreds; each entry is small). */
export const MAX_LISTING_BYTES = 1024 * 1024;
/** A model name given with --model is at most this long. */
const MAX_MODEL = 200;

/** The base URL of --base-url, checked: http(s), no user or password in it, no query; no trailing slash. */
export function baseUrlOf(text: string): string {
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    throw new UsageError(`--base-url must be the URL of an OpenAI-compatible server (http://host:port/v1), not '${text.slice(0, 200)}'`);
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") throw new UsageError(`--base-url must be an http or https URL, not ${u.protocol}`);
  if (u.username || u.password)
    throw new UsageError("--base-url must not hold a user or password: the config names the variable holding a key (api_key_env), never the key");
  if (u.search || u.hash) throw new UsageError("--base-url must not have a query or a fragment: give the server's base URL (http://host:port/v1)");
  return u.toString().replace(/\/+$/, "");
}

/** The --model name, checked: one word of at most 200 characters (a route's model is the text after its provider's colon). */
export function modelName(text: string): string {
  const name = text.trim();
  if (!name || name.length > MAX_MODEL || /\s/.test(name) || [...name].some((c) => c.charCodeAt(0) < 32 || c.charCodeAt(0) === 127))
    throw new UsageError(`--model must be the server's name for a model (one word, at most ${MAX_MODEL} characters), not '${text.slice(0, 200)}'`);
  return name;
}

const isChat = (id: string) => !/embed|bert|rerank|clip|whisper|tts|moderation/i.test(id);

/** Families by the names model ids carry them under, most specific first. */
const FAMILIES = ["mixtral", "mistral", "llama", "qwen", "gemma", "phi", "deepseek", "gpt", "claude", "command", "granite", "olmo", "glm", "falcon", "yi"];

/** The family of a served model id: `Qwen/Qwen2.5-7B-Instruct` → qwen, `meta-llama/Llama-3.1-8B` → llama, `lmstudio-community/gemma-2-9b` → gemma. */
export function familyOfId(id: string): string {
  const name = (id.split("/").pop() ?? id).toLowerCase();
  let best: { family: string; at: number } | undefined;
  for (const family of FAMILIES) {
    const at = name.indexOf(family);
    if (at !== -1 && (!best || at < best.at)) best = { family, at };
  }
  return best?.family ?? (/^[a-z]+/.exec(name)?.[0] || name);
}

/** The drafting model (`model`, else the first chat model) and a judge of another family when one is served (else the same model). */
export function pickServerModels(models: readonly string[], model: string | undefined): { executor: string; challenger: string } {
  const chat = models.filter(isChat);
  const executor = model ?? chat[0] ?? models[0];
  if (!executor) throw new UsageError("the server lists no models: name the one to use with --model");
  const other = chat.find((m) => familyOfId(m) !== familyOfId(executor));
  return { executor, challenger: other ?? executor };
}

/** Asks the server for its models at `base/models`, then at `base/v1/models` when `base` has no /v1 and the first did not list any. */
async function listModels(base: string): Promise<{ url: string; models: string[] } | { unreached: string }> {
  const tries = /\/v1$/.test(base) ? [base] : [base, `${base}/v1`];
  let why = "";
  for (const url of tries) {
    const got = await getJson(`${url}/models`, {}, MAX_LISTING_BYTES);
    if ("unreachable" in got) return { unreached: got.unreachable }; // the host itself did not answer: a second path will not either
    const ids = got.status === 200 ? modelIds(got.body) : undefined;
    if (ids) return { url, models: ids };
    why ||=
      got.status === 401 || got.status === 403
        ? `it answered ${got.status}: it needs a key (set api_key_env in the file)`
        : `GET ${url}/models answered ${got.status}${got.status === 200 ? " with no model listing" : ""}`;
  }
  return { unreached: why };
}

/** What `init --base-url` writes: the server's models when it answers, the named model when it does not. */
export async function findServer(baseUrl: string, model: string | undefined): Promise<ServerFound> {
  const base = baseUrlOf(baseUrl);
  const named = model === undefined ? undefined : modelName(model);
  const listing = await listModels(base);
  if ("unreached" in listing) {
    if (named === undefined)
      throw new UsageError(`--base-url ${base}: could not list its models (${listing.unreached}): start the server, or name its model with --model M`);
    return { kind: "server", url: base, executor: named, challenger: named, models: undefined, unreached: listing.unreached };
  }
  if (named !== undefined && !listing.models.includes(named)) {
    const some = listing.models.slice(0, 8).join(", ");
    throw new UsageError(
      `--model ${named}: ${listing.url} does not serve it (${listing.models.length ? `it serves ${some}${listing.models.length > 8 ? ", …" : ""}` : "it lists no models"})`,
    );
  }
  const chat = listing.models.filter(isChat);
  return { kind: "server", url: listing.url, ...pickServerModels(listing.models, named), models: chat };
}
