import { rngFor } from "./prng.js";
import type { Quirks, Rate } from "./types.js";

/** A model that follows every instruction to the letter. */
export const perfect: Quirks = {
  paraphrase: false,
  nearQuotes: false,
  think: false,
  fences: false,
  prose: false,
  echo: false,
  offListEnums: false,
  rawNewlines: false,
  trailingCommas: false,
  producerIgnores: false,
  producerClaimsIgnored: false,
  overflag: false,
  unclosedFence: false,
  revisionPreamble: false,
  serial: false,
  latencyMs: 0,
  truncate: 0,
  emptyReply: 0,
};

/** An 8B model on a local Ollama (qwen3:8b, llama3.1:8b): thinks out loud, loose JSON, one GPU. */
export const small8b: Quirks = {
  paraphrase: true,
  nearQuotes: 0.5,
  think: 0.8,
  fences: 0.5,
  prose: 0.4,
  echo: 0.25,
  offListEnums: 0.3,
  rawNewlines: 0.15,
  trailingCommas: 0.1,
  producerIgnores: 0.3,
  producerClaimsIgnored: 0.2,
  overflag: 0.2,
  unclosedFence: false,
  revisionPreamble: 0.7,
  serial: true,
  latencyMs: 0,
  truncate: 0.04,
  emptyReply: 0.03,
};

/** A frontier API model: rewords between rounds and fences its JSON, otherwise disciplined. */
export const frontier: Quirks = {
  paraphrase: true,
  nearQuotes: 0.15,
  think: false,
  fences: 0.3,
  prose: 0.1,
  echo: false,
  offListEnums: 0.05,
  rawNewlines: false,
  trailingCommas: false,
  producerIgnores: false,
  producerClaimsIgnored: false,
  overflag: 0.05,
  unclosedFence: false,
  revisionPreamble: 0.1,
  serial: false,
  latencyMs: 0,
  truncate: 0.01,
  emptyReply: 0,
};

export type QuirkName = Exclude<keyof Quirks, "serial" | "latencyMs">;

export function rateOf(r: Rate): number {
  return r === true ? 1 : r === false ? 0 : r;
}

/** Rolls the quirks of one request: each quirk has its own seeded stream, so adding one never shifts another. */
export interface Dice {
  on(name: QuirkName, ...sub: (string | number)[]): boolean;
}

export function dice(quirks: Quirks, seed: number, key: string): Dice {
  return { on: (name, ...sub) => rngFor(seed, key, name, ...sub).chance(rateOf(quirks[name])) };
}
