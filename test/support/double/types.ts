/** The vocabulary of the realistic model double: what is wrong in its world, and how its models misbehave. */

export type Severity = "CRITICAL" | "HIGH" | "MEDIUM" | "LOW";
export type Stage = "discover" | "shape" | "plan" | "spec";

/** One flaw a producer writes into its artifact, and the critics that notice it. */
export interface Defect {
  id: string;
  stage: Stage;
  /** A sentence the producer writes into its artifact (a criterion, for stage `spec`). */
  line: string;
  /** The sentence that replaces `line` once a producer fixes it. */
  fix: string;
  /** Critic roles that notice it (`plan_reviewer` included, for a flaw only the reviewer sees). */
  lanes: readonly string[];
  severity: Severity;
  category: string;
  /** At least 3 paraphrases of the concern: lane k in round r uses wordings[(k + r) % n] (with paraphrase on). */
  wordings: readonly string[];
  humanRequired?: boolean;
  /** The plan reviewer's dimension for it; derived from `category` when absent. */
  dimension?: string;
  /** A critic's overreach, not a defect that should block: the verifier refutes it (a real defect it confirms). */
  nitpick?: boolean;
  /**
   * Words of a known gap's title this defect repeats: a critic shown a `known_gaps` block with a line
   * holding them ties its finding to that gap's id (`known_gap`), as a real surfacer did.
   */
  gap?: string;
  /** A line of the code a coding agent writes (docs/implement.md): no producer writes it; the review critics see it in the diff. */
  code?: boolean;
  /**
   * A line of the repository's code that makes `line` a defect (issue 30): a critic whose request
   * carries a code block holding it raises the finding at full severity, quoting that line of code; one
   * that sees no such code raises it as MEDIUM — it cannot see the code, as the real critic said — and
   * the verifier confirms it only when its own request carries the line.
   */
  inCode?: string;
  /**
   * A line of code a coding agent writes that answers the concern (one the plan forwards to
   * implementation): `review.acceptance`, given the concern as tracked, settles it `addressed` quoting
   * that line when the diff carries it, `not_addressed` when it does not (docs/implement.md "Forwarded concerns").
   */
  answeredBy?: string;
}

/** A sentence of an executor draft the challenger flags while it is in the draft. */
export interface GateDefect {
  sentence: string;
  category: string;
  severity: "critical" | "high" | "medium" | "low";
  concern: string;
}

export interface DraftScenario {
  draft: string;
  defects: readonly GateDefect[];
}

export interface Scenario {
  /** Pipeline issues by title (the first line of the `issue` data block, after `# `). */
  issues?: Readonly<Record<string, readonly Defect[]>>;
  /** Titles the complexity gate answers TRIVIAL (otherwise a keyword guess: typo/docs/readme → TRIVIAL). */
  trivial?: readonly string[];
  /** Gate prompts and the drafts the executor writes for them. */
  drafts?: Readonly<Record<string, DraftScenario>>;
}

/** A quirk is off (false, 0), always on (true, 1), or on for that fraction of requests (drawn per request, seeded). */
export type Rate = boolean | number;

export interface Quirks {
  /** Critics reword their concerns every round unless given previous_findings (then they repeat them word for word); they also re-raise tracked concerns in new words. */
  paraphrase: Rate;
  /** Evidence quoted near-verbatim (case, quotes, dashes, bold, `…`, across a list bullet). */
  nearQuotes: Rate;
  /** `<think>…</think>` (or a lone `</think>`) before the answer, sometimes holding a different JSON answer. */
  think: Rate;
  /** JSON answers in a ```json fence. */
  fences: Rate;
  /** A sentence before and after a JSON answer. */
  prose: Rate;
  /** The reply first repeats a JSON object of the request (previous findings, or one in the draft/artifact). */
  echo: Rate;
  /** Enum values in other cases/spellings ("Needs Work", "High"), plus one invalid item (severity INFO / unknown category). */
  offListEnums: Rate;
  /** A raw newline inside a JSON string value. */
  rawNewlines: Rate;
  /** Trailing commas in JSON objects and arrays. */
  trailingCommas: Rate;
  /** A producer ignores the concerns it is given and writes the same artifact again. */
  producerIgnores: Rate;
  /** A producer reports `ignored` on CRITICAL concerns without fixing them. */
  producerClaimsIgnored: Rate;
  /** Critics add an ungrounded CRITICAL "central premise is unvalidated"; shape.product_strategist a human_required LOW; the challenger an ungrounded concern. */
  overflag: Rate;
  /** A producer's fenced `addressed` block is never closed: the reply ends inside it, as a real frontier model's did. */
  unclosedFence: Rate;
  /** "Here is the revised answer:" before a revision. */
  revisionPreamble: Rate;
  /** One request at a time, the rest queued (a single local GPU). */
  serial: boolean;
  /** Time each request takes, in ms (while it holds the GPU when serial). */
  latencyMs: number;
  /** Replies cut off: `finish_reason: "length"` with half the text, or a stream that stops with no finish reason. Re-drawn on an identical retry. */
  truncate: Rate;
  /** Empty replies (or reasoning only). Re-drawn on an identical retry. */
  emptyReply: Rate;
}
