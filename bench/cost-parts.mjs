// Where the fresh (uncached) input of a cost run comes from (issue 21): every request the double
// served, replayed through the same prefix cache, its uncached characters attributed to the part of
// the request they fall in (the system rules, the project, the issue, an earlier artifact, the
// artifact under review, the rubric, the persona, the memory, the task line, a retry's critique) and
// to why they were not cached: new to the provider, or lost to the cache's rules (the 128-token
// block rounding, nothing under 1,024 tokens). Used by bench/cost.mjs; figures in tokens (4 chars).
import { createHash } from "node:crypto";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const CHARS_PER_TOKEN = 4;
const BLOCK_CHARS = 128 * CHARS_PER_TOKEN;
const MIN_CHARS = 1024 * CHARS_PER_TOKEN;

const textOf = (content) => (typeof content === "string" ? content : Array.isArray(content) ? content.map((p) => p?.text ?? "").join("") : "");
/** The prompt as the cache sees it (test/support/double/prompt-cache.ts). */
const promptText = (messages) => messages.map((m) => `<|${m.role}|>\n${textOf(m.content)}`).join("\n");

/** Persona texts (role name → text) and the two format files, from the personas this build ships. */
function personaTexts() {
  const dir = join(ROOT, "personas");
  const out = [];
  for (const f of readdirSync(dir)) out.push({ name: f.replace(/\.md$/, ""), text: readFileSync(join(dir, f), "utf8").trim() });
  return out;
}

/** What each character of a prompt is: a label per character span, in order. */
function labelSpans(text, personas) {
  const labels = new Array(text.length).fill("glue");
  const mark = (from, to, label) => {
    for (let i = from; i < to && i < text.length; i++) labels[i] = label;
  };
  const user = text.indexOf("<|user|>\n");
  mark(0, user === -1 ? text.length : user, "system");
  const firstAssistant = text.indexOf("\n<|assistant|>\n");
  const open = /<data kind="([a-z_]+)"(?: name="([a-z_]+)")? tag="([0-9a-f]{8,64})">\n/g;
  for (let m = open.exec(text); m; m = open.exec(text)) {
    const close = `\n</data tag="${m[3]}">`;
    const end = text.indexOf(close, m.index + m[0].length);
    if (end === -1) break;
    const kind = m[1] === "artifact" ? `artifact:${m[2]}` : m[1];
    mark(m.index, end + close.length, kind);
    open.lastIndex = end + close.length;
  }
  for (const p of personas) {
    for (let at = text.indexOf(p.text); at !== -1; at = text.indexOf(p.text, at + 1))
      mark(at, at + p.text.length, p.name === "_format-critic" ? "rubric" : p.name === "_format-producer" ? "producer_format" : "persona");
  }
  for (let at = text.indexOf("Role: "); at !== -1; at = text.indexOf("Role: ", at + 1)) mark(at, text.indexOf("\n", at), "persona");
  for (let at = text.indexOf("Task: "); at !== -1; at = text.indexOf("Task: ", at + 1)) {
    const end = text.indexOf("\n", at);
    mark(at, end === -1 ? text.length : end, "task");
  }
  // A producer's retry: its draft and the council's critique after the first request (the draft as an artifact block stays one).
  if (firstAssistant !== -1) for (let i = firstAssistant; i < text.length; i++) if (!labels[i].startsWith("artifact")) labels[i] = `retry:${labels[i]}`;
  return labels;
}

const commonPrefix = (a, b) => {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
};

/** The kind of request a role makes, for grouping. */
function kindOf(model, text) {
  if (model === "complexity_gate") return "gate";
  if (model === "verifier") return "verifier";
  if (model === "plan_reviewer") return "reviewer";
  if (text.includes("\n<|assistant|>\n")) return "producer_retry";
  if (text.includes('<data kind="under_review"')) return "critic";
  return "producer";
}

/**
 * Attributes the uncached tokens of `requests` (ChatRequest bodies in arrival order, as one provider
 * cache saw them): by part and cause, and by kind of request. Returns token counts.
 */
export function freshByPart(requests, counted = () => true) {
  const personas = personaTexts();
  const seen = [];
  const blocks = new Set();
  const byPart = {};
  const byKind = {};
  const inputByPart = {};
  let total = 0;
  let fresh = 0;
  const add = (o, k, n) => void (o[k] = (o[k] ?? 0) + n);
  for (const [index, body] of requests.entries()) {
    const text = promptText(body.messages);
    // The cache's answer: whole 512-character blocks of a prefix seen before, none under 1,024 tokens.
    const hash = createHash("sha256");
    let cachedBlocks = 0;
    for (let k = 1; k * BLOCK_CHARS <= text.length; k++) {
      hash.update(text.slice((k - 1) * BLOCK_CHARS, k * BLOCK_CHARS));
      const key = hash.copy().digest("hex");
      if (blocks.has(key) && cachedBlocks === k - 1) cachedBlocks = k;
      blocks.add(key);
    }
    const cached = cachedBlocks * BLOCK_CHARS >= MIN_CHARS ? cachedBlocks * BLOCK_CHARS : 0;
    // What an ideal cache would have served: the longest prefix shared with any earlier request.
    const ideal = seen.reduce((n, t) => Math.max(n, commonPrefix(t, text)), 0);
    seen.push(text);
    if (!counted(index)) continue;
    const labels = labelSpans(text, personas);
    const kind = kindOf(body.model, text);
    total += text.length;
    fresh += text.length - cached;
    add(byKind, kind, text.length - cached);
    for (const l of labels) add(inputByPart, l, 1);
    for (let i = cached; i < text.length; i++) {
      const cause = i < ideal ? (ideal < MIN_CHARS ? "under_1024" : "block_rounding") : "new";
      add(byPart, cause === "new" ? `new:${labels[i]}` : cause, 1);
    }
  }
  const tok = (o) =>
    Object.fromEntries(
      Object.entries(o)
        .sort((a, b) => b[1] - a[1])
        .map(([k, v]) => [k, Math.round(v / CHARS_PER_TOKEN)]),
    );
  return {
    input_tokens: Math.round(total / CHARS_PER_TOKEN),
    fresh_tokens: Math.round(fresh / CHARS_PER_TOKEN),
    by_part: tok(byPart),
    by_kind: tok(byKind),
    // Every input token (cached or not) by the part of the request it is in: where the input goes.
    input_by_part: tok(inputByPart),
  };
}
