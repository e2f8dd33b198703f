import type { AddressedItem } from "../contracts/concern.js";
import { isContentless, MIN_WORDS, wordCount } from "../contracts/content.js";
import { UsageError } from "../errors.js";
import { parseCriteria, parseProducer, renderCriteria } from "./roles.js";

/**
 * How a stage's artifact is made, shown and kept (DESIGN: artifacts with codecs): read from the
 * producer's reply, rendered as the text critics review and quote, and encoded for the store. The
 * stage table names one per stage, so the stage runner never branches on what an artifact is.
 */
export interface ArtifactCodec<A> {
  /** What the artifact is: markdown, a list of criteria, a diff with its test result. */
  readonly kind: "markdown" | "criteria" | "diff";
  /** The producer's reply as the artifact and the pending concerns it says it answered; `unclosedFence` when its json block was never closed (a producer fault). */
  read(role: string, answer: string, quotedFrom: readonly string[]): { artifact: A; addressed: AddressedItem[]; unclosedFence?: true };
  /** The text critics review, quote and are grounded against. */
  render(artifact: A): string;
  /** The store's form of the artifact. */
  encode(artifact: A): string;
  /** The artifact back from the store's form. */
  decode(stored: string): A;
  /** Why the artifact says nothing (a producer fault: issue 32), or undefined when it can be reviewed. */
  empty?(artifact: A): string | undefined;
}

/** Why a markdown artifact says nothing: fewer than MIN_WORDS words, or no letter at all. */
export function emptyMarkdown(text: string): string | undefined {
  const words = wordCount(text);
  if (words >= MIN_WORDS && !isContentless(text)) return undefined;
  const shown = text.trim().slice(0, 20).replace(/\s+/g, " ");
  return `${words} word${words === 1 ? "" : "s"}${shown ? `: \`${shown.replace(/`/g, "'")}${text.trim().length > 20 ? "…" : ""}\`` : ""}`;
}

/** Why a list of acceptance criteria says nothing: no criterion, or one shorter than MIN_WORDS words. */
export function emptyCriteria(criteria: readonly string[]): string | undefined {
  if (criteria.length === 0) return "no criterion";
  const i = criteria.findIndex((c) => wordCount(c) < MIN_WORDS || isContentless(c));
  if (i === -1) return undefined;
  const c = (criteria[i] ?? "").trim().slice(0, 40);
  return `criterion ${i + 1} is shorter than ${MIN_WORDS} words: \`${c.replace(/`/g, "'")}\``;
}

/** A markdown artifact (the brief, the shape, the plan): the reply is the artifact, its `addressed` block cut off. */
export const markdownCodec: ArtifactCodec<string> = {
  kind: "markdown",
  read: (role, answer) => parseProducer(role, answer),
  render: (a) => a,
  encode: (a) => a,
  decode: (s) => s,
  empty: emptyMarkdown,
};

/** The acceptance criteria: read from JSON (or a markdown list), shown as a markdown list, kept as a JSON array. */
export const criteriaCodec: ArtifactCodec<string[]> = {
  kind: "criteria",
  read: (role, answer, quotedFrom) => {
    const { criteria, addressed } = parseCriteria(role, answer, quotedFrom);
    return { artifact: criteria, addressed };
  },
  render: renderCriteria,
  encode: (a) => JSON.stringify(a),
  decode: (s) => {
    const v: unknown = JSON.parse(s);
    if (!Array.isArray(v) || !v.every((c) => typeof c === "string")) throw new UsageError("stored acceptance criteria are not a list of strings");
    return v;
  },
  empty: emptyCriteria,
};
