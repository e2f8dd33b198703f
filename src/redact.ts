/** Provider-shaped keys, even ones we were never told about ("Incorrect API key provided: sk-ab***cd"). */
const KEY_SHAPED = /\b(sk|pk|rk|ghp|gho|ghs|ghu|github_pat|xox[bap])[-_][A-Za-z0-9_*.-]{6,}/g;
/** Authorization headers a server echoes back (a credential-looking token: long, with a digit). */
const BEARER = /\b(Bearer|Basic)\s+(?=[A-Za-z._~+/=-]*\d)[A-Za-z0-9._~+/=-]{16,}/g;

/**
 * Secrets this long or longer are also found written another way (docs/configuration.md#keys-are-secrets-from-the-moment-the-config-loads):
 * with whitespace between their characters, percent-encoded (wholly or in part), or base64 (standard
 * or URL alphabet, at any alignment inside a longer encoded text). Shorter ones only as they are:
 * their other forms would match ordinary text.
 */
export const ENCODED_FORMS_MIN = 8;
/** The base64 fragment of a secret that is looked for: shorter fragments are too likely by chance. */
const BASE64_FRAGMENT_MIN = 8;

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&");
const hexEither = (byte: number) =>
  byte
    .toString(16)
    .padStart(2, "0")
    .split("")
    .map((h) => (/[a-f]/.test(h) ? `[${h}${h.toUpperCase()}]` : h))
    .join("");

/** One character of a secret: itself, or its UTF-8 bytes percent-encoded (either case of hex). */
function charForm(c: string): string {
  const bytes = [...Buffer.from(c, "utf8")];
  return `(?:${escapeRe(c)}|${bytes.map((b) => `%${hexEither(b)}`).join("")})`;
}

/**
 * The base64 text that stands for the secret wherever it sits in an encoded string: for each of the
 * three alignments, the characters whose six bits all come from the secret's own bytes.
 */
function base64Fragments(secret: string): string[] {
  const bytes = Buffer.from(secret, "utf8");
  const out = new Set<string>();
  for (let k = 0; k < 3; k++) {
    const text = Buffer.concat([Buffer.alloc(k), bytes])
      .toString("base64")
      .replace(/=+$/, "");
    const from = Math.ceil((8 * k) / 6);
    const to = Math.floor((8 * (k + bytes.length)) / 6);
    const fragment = text.slice(from, to);
    if (fragment.length >= BASE64_FRAGMENT_MIN) {
      out.add(fragment);
      out.add(fragment.replace(/\+/g, "-").replace(/\//g, "_"));
    }
  }
  return [...out];
}

/** The patterns for the other forms of one secret (none for a short one). */
function formsOf(secret: string): string[] {
  if (secret.length < ENCODED_FORMS_MIN) return [];
  const chars = [...secret];
  // Whitespace between characters, each character itself or percent-encoded: "s k - a b", "sk%2Dab", "%73%6B…".
  const spacedOrEncoded = chars.map(charForm).join("\\s{0,3}");
  return [spacedOrEncoded, ...base64Fragments(secret).map(escapeRe)];
}

/** The compiled other forms of a set of secrets: one alternation, longest secrets first. */
function compile(secrets: readonly string[]): RegExp | undefined {
  const patterns = [...secrets].sort((a, b) => b.length - a.length).flatMap(formsOf);
  return patterns.length ? new RegExp(patterns.join("|"), "g") : undefined;
}

/** Compiled forms of the secret lists `redact` was last called with (a process has one or two). */
const compiled = new Map<string, RegExp | undefined>();
function formsFor(secrets: readonly string[]): RegExp | undefined {
  const key = secrets.join("\u0000");
  if (!compiled.has(key)) {
    if (compiled.size >= 16) compiled.clear();
    compiled.set(key, compile(secrets));
  }
  return compiled.get(key);
}

function redactWith(text: string, secrets: readonly string[], forms: RegExp | undefined): string {
  let out = text;
  for (const s of secrets) {
    if (s && s.length >= 4 && out.includes(s)) out = out.split(s).join("[redacted]");
  }
  if (forms) out = out.replace(forms, "[redacted]");
  return out.replace(KEY_SHAPED, "[redacted]").replace(BEARER, "$1 [redacted]");
}

/**
 * Replaces every known secret — as it is, spaced out, percent-encoded or in base64 — and anything
 * shaped like a provider key with `[redacted]`.
 */
export function redact(text: string, secrets: readonly string[] = []): string {
  return redactWith(text, secrets, secrets.length ? formsFor(secrets) : undefined);
}

/** How many times the known secrets (in any of their forms) occur in a text: a diff that holds one is flagged (docs/implement.md). */
export function countSecrets(text: string, secrets: readonly string[]): number {
  let n = 0;
  for (const s of secrets) if (s.length >= 4) n += text.split(s).length - 1;
  const forms = secrets.length ? formsFor(secrets) : undefined;
  if (forms) {
    const rest = secrets.reduce((t, s) => (s.length >= 4 ? t.split(s).join("\u0000") : t), text);
    n += rest.match(forms)?.length ?? 0;
  }
  return n;
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
  let forms = compile(secrets);
  const fn = ((text: string) => redactWith(text, secrets, forms)) as Redactor;
  Object.defineProperty(fn, "secrets", { get: () => secrets });
  fn.add = (s) => {
    if (s.length >= 4 && !secrets.includes(s)) {
      secrets.push(s);
      secrets.sort((a, b) => b.length - a.length); // a longer secret containing a shorter one goes first
      forms = compile(secrets);
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
