import type { CodeLocation } from "../contracts/code-context.js";
import { ground, type GroundingText } from "./grounding.js";

/**
 * The code block a critic, verifier or reviewer was given, as evidence (docs/issue.md "Findings about
 * the code"): a CRITICAL or HIGH finding may quote it instead of the artifact — grounded with the same
 * normalisation as a draft quote — and the concern then names the file and lines it quotes.
 */
export interface CodeEvidence {
  /** Tells code blocks apart (the digest of the block's text): quotes of different blocks never overlap. */
  key: string;
  text: GroundingText;
  /** The file and lines a grounded quote comes from. */
  locate(evidence: string): CodeLocation | undefined;
}

/** Where a quote grounds: the artifact, else the code block (with its place there), else nowhere. */
export type Quoted =
  | { in: "artifact"; span: [number, number] | null }
  | { in: "code"; key: string; span: [number, number] | null; at: CodeLocation | undefined }
  | { in: "none" };

/** Grounds a quote against the artifact first, then against the code block the voice was shown. */
export function groundQuote(artifact: GroundingText, code: CodeEvidence | undefined, evidence: string): Quoted {
  const a = ground(artifact, evidence);
  if (a.grounded) return { in: "artifact", span: a.span };
  if (!code) return { in: "none" };
  const c = ground(code.text, evidence);
  if (!c.grounded) return { in: "none" };
  return { in: "code", key: code.key, span: c.span, at: code.locate(evidence) };
}
