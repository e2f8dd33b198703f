import type { Dice } from "./quirks.js";
import { rngFor } from "./prng.js";

export interface JsonStyle {
  indent?: number;
  trailingCommas?: boolean;
  /** Write this string value (its first occurrence) with one raw newline in place of a space. */
  rawNewlineIn?: string;
}

/** JSON as a sloppy model writes it: optionally pretty, with trailing commas, or a raw newline inside a string. */
export function writeJson(value: unknown, style: JsonStyle = {}): string {
  let rawDone = false;
  const indent = style.indent ?? 0;
  const str = (s: string): string => {
    const quoted = JSON.stringify(s);
    if (!rawDone && style.rawNewlineIn !== undefined && s === style.rawNewlineIn) {
      const spaces = [...quoted.matchAll(/ /g)].map((m) => m.index);
      const at = spaces[Math.floor(spaces.length / 2)];
      if (at !== undefined) {
        rawDone = true;
        return `${quoted.slice(0, at)}\n${quoted.slice(at + 1)}`;
      }
    }
    return quoted;
  };
  const walk = (v: unknown, depth: number): string => {
    if (typeof v === "string") return str(v);
    if (v === null || typeof v !== "object") return JSON.stringify(v) ?? "null";
    const pad = indent ? `\n${" ".repeat(indent * (depth + 1))}` : "";
    const end = indent ? `\n${" ".repeat(indent * depth)}` : "";
    const comma = style.trailingCommas ? "," : "";
    if (Array.isArray(v)) {
      if (v.length === 0) return "[]";
      return `[${v.map((x) => pad + walk(x, depth + 1)).join(",")}${comma}${end}]`;
    }
    const entries = Object.entries(v as Record<string, unknown>).filter(([, x]) => x !== undefined);
    if (entries.length === 0) return "{}";
    const colon = indent ? ": " : ":";
    return `{${entries.map(([k, x]) => `${pad}${JSON.stringify(k)}${colon}${walk(x, depth + 1)}`).join(",")}${comma}${end}}`;
  };
  return walk(value, 0);
}

export interface JsonReply {
  /** The real answer. */
  value: unknown;
  /** A string value of the answer that may carry a raw newline (never one a critic repeats from before). */
  rawCandidate?: string;
  /** A different answer the model considers while thinking. */
  thinkAlternative: unknown;
  /** A JSON object of the request the model may repeat first (raw text). */
  echo?: string;
  /** What the model thinks about, for the reasoning text. */
  subject: string;
}

const PROSE_BEFORE = [
  "Here is my assessment in the requested JSON format.",
  "Sure — here is the review.",
  "After reading the material carefully, here is my answer:",
];
const PROSE_AFTER = [
  "Let me know if you want me to expand on any of these points.",
  "I hope this helps.",
  "These are the most important points; everything else looks reasonable.",
];

/** The reasoning a thinking model writes before answering; `alternative` is a JSON answer it drafts there. */
export function thinkBlock(_d: Dice, seed: number, key: string, subject: string, alternative?: string): string {
  const rng = rngFor(seed, key, "think-shape");
  const lines = [
    `Okay, let me look at ${subject}.`,
    "I need to follow the output format exactly and quote the text verbatim.",
    ...(alternative !== undefined && rng.chance(0.5)
      ? ["A first draft of the answer:", alternative, "Hmm, wait. Let me check that again against the text."]
      : []),
    "Right, I think I have it now.",
  ];
  const body = lines.join("\n");
  // Ollama templates sometimes eat the opening tag: a lone </think> with the reasoning before it.
  return rng.chance(0.3) ? `${body}\n</think>\n\n` : `<think>\n${body}\n</think>\n\n`;
}

/** Renders a JSON answer with the request's quirks: think, prose, echo, fences, commas, raw newlines. */
export function renderJson(d: Dice, seed: number, key: string, r: JsonReply): string {
  const rng = rngFor(seed, key, "prose-pick");
  const fenced = d.on("fences");
  const style: JsonStyle = {
    indent: fenced ? 2 : 0,
    trailingCommas: d.on("trailingCommas"),
    ...(d.on("rawNewlines") && r.rawCandidate !== undefined ? { rawNewlineIn: r.rawCandidate } : {}),
  };
  const fence = (s: string) => (fenced ? `\`\`\`json\n${s}\n\`\`\`` : s);
  const parts: string[] = [];
  if (d.on("prose")) parts.push(rng.pick(PROSE_BEFORE));
  if (r.echo !== undefined && d.on("echo")) parts.push(fence(r.echo), "Now my own answer:");
  parts.push(fence(writeJson(r.value, style)));
  if (d.on("prose")) parts.push(rng.pick(PROSE_AFTER));
  const think = d.on("think") ? thinkBlock(d, seed, key, r.subject, JSON.stringify(r.thinkAlternative)) : "";
  return think + parts.join("\n\n");
}
