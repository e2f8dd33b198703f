/** Provider-shaped keys, even ones we were never told about ("Incorrect API key provided: sk-ab***cd"). */
const KEY_SHAPED = /\b(sk|pk|rk|ghp|gho|ghs|ghu|github_pat|xox[bap])[-_][A-Za-z0-9_*.-]{6,}/g;
/** Authorization headers a server echoes back (a credential-looking token: long, with a digit). */
const BEARER = /\b(Bearer|Basic)\s+(?=[A-Za-z._~+/=-]*\d)[A-Za-z0-9._~+/=-]{16,}/g;

/** Replaces every known secret (and anything shaped like a provider key) with `[redacted]`. */
export function redact(text: string, secrets: readonly string[] = []): string {
  let out = text;
  for (const s of secrets) {
    if (s && s.length >= 4 && out.includes(s)) out = out.split(s).join("[redacted]");
  }
  return out.replace(KEY_SHAPED, "[redacted]").replace(BEARER, "$1 [redacted]");
}

/**
 * The secrets of one process, known when the config loads (docs/configuration.md): every sink — stdout,
 * stderr, the event log, the cache, the wiki, telemetry — redacts through one of these.
 */
export interface Redactor {
  (text: string): string;
  readonly secrets: readonly string[];
  /** Adds a secret learned later (a token typed into a prompt, say). */
  add(secret: string): void;
}

export function redactor(initial: readonly string[] = []): Redactor {
  const secrets = [...new Set(initial.filter((s) => s.length >= 4))].sort((a, b) => b.length - a.length);
  const fn = ((text: string) => redact(text, secrets)) as Redactor;
  Object.defineProperty(fn, "secrets", { get: () => secrets });
  fn.add = (s) => {
    if (s.length >= 4 && !secrets.includes(s)) {
      secrets.push(s);
      secrets.sort((a, b) => b.length - a.length); // a longer secret containing a shorter one goes first
    }
  };
  return fn;
}

/** Redacts every string inside a JSON-like value (events, call records) without changing its shape. */
export function redactDeep<T>(value: T, r: (text: string) => string): T {
  if (typeof value === "string") return r(value) as T;
  if (Array.isArray(value)) return value.map((v) => redactDeep(v, r)) as T;
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = redactDeep(v, r);
    return out as T;
  }
  return value;
}
