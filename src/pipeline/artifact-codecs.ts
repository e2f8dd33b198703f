import type { AddressedItem } from "../contracts/concern.js";
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
}

/** A markdown artifact (the brief, the shape, the plan): the reply is the artifact, its `addressed` block cut off. */
export const markdownCodec: ArtifactCodec<string> = {
  kind: "markdown",
  read: (role, answer) => parseProducer(role, answer),
  render: (a) => a,
  encode: (a) => a,
  decode: (s) => s,
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
};
