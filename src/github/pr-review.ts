import { normalize } from "../adversarial/grounding.js";
import { SEVERITY_RANK } from "../contracts/concern.js";
import { sha256 } from "../hash.js";
import type { ReviewSettings } from "../contracts/config.js";
import type { CriterionCheck } from "../implement/acceptance.js";
import { locateQuote, parseDiff, type DiffAnchor } from "./diff-lines.js";
import type { ReviewFinding } from "./findings.js";
import { quoteLine } from "./markdown.js";
import { isRefused, type NewReviewComment, type PullRequestPort, type ReviewCommentRef, type ReviewRef } from "./pr-port.js";
import { findingCounts, findingLine, findingText } from "./review-text.js";

/**
 * One review round posted on a pull request as a GitHub review (docs/adr/037): an inline comment per
 * finding on the diff line its evidence quotes, the rest in the review's body; dissent's earlier
 * comments — found by the hidden marker each starts with — updated (still raised) or marked resolved
 * (no longer raised) instead of new ones piling up; anything a person wrote never touched.
 */

/** What the review is of, on which pull request and commit. */
export interface ReviewSubject {
  /**
   * Whose comments these are: `issue-12` for `issue implement`'s rounds, `pr-7` for `pr review`.
   * Every marker carries it, so two reviewers of one pull request never touch each other's comments.
   */
  key: string;
  pull: number;
  /** The commit the round reviewed: on the pull request (it or an ancestor of its head); null when it never reached GitHub (then the review is on the head, all in its body). */
  commit: string | null;
}

/** One round to post. */
export interface RoundReview {
  subject: ReviewSubject;
  /** The round: `token` unique for the subject (a review already posted for it is not posted again, so a resumed run posts none twice), `label` how it is named ("attempt 2"). */
  round: { token: string; label: string };
  /** The unified diff the critics read, base…commit; null when the commit is not on GitHub (then nothing is inline). */
  diff: string | null;
  findings: readonly ReviewFinding[];
  criteria: readonly string[];
  verdicts: readonly CriterionCheck[];
  settings: ReviewSettings;
  /** Lines under the review's head line (how the tests ended, say). */
  notes?: readonly string[];
  /** The dashboard's page of the work, when `serve.public_url` is set. */
  detailsUrl?: string | null;
}

/** What was posted, updated and resolved. */
export interface PostedReview {
  /** The review's id; null when one was already posted for this round. */
  review: number | null;
  event: "COMMENT" | "REQUEST_CHANGES" | null;
  /** Finding ids placed as new inline comments. */
  inline: string[];
  /** Finding ids listed in the review's body (below `inline_min_severity`, no line of the diff, or over the cap). */
  inBody: string[];
  /** dissent's earlier comments updated: the finding is still raised. */
  updated: string[];
  /** dissent's earlier comments marked resolved: this round no longer raises them. */
  resolved: string[];
  /** dissent's earlier change requests dismissed (nothing blocks any more). */
  dismissed: number[];
  /** What GitHub refused, and what was done instead: a change request on the token's own pull request (commented instead), inline comments it could not place (moved into the body). */
  fallbacks: { kind: "own_pull_request" | "inline_refused"; detail: string }[];
}

/** The most new inline comments one review carries; the rest go in its body. */
export const MAX_INLINE_COMMENTS = 30;
/** GitHub's bound on a review's or a comment's body is 65,536 characters; dissent's stay under this. */
export const REVIEW_BODY_CHARS = 60_000;

const safe = (s: string) => s.replace(/[^A-Za-z0-9._:-]/g, "_").slice(0, 100);

/** The hidden marker a round's review starts with. */
export const reviewMarker = (key: string, token: string) => `<!-- dissent:review key=${safe(key)} round=${safe(token)} -->`;
const reviewPrefix = (key: string) => `<!-- dissent:review key=${safe(key)} `;

/**
 * What tells one finding from another across rounds and runs: its id; else its fingerprint (the same
 * concern in other words may get another id in a later run); else its critic and the words it
 * quotes (the same line found wrong again).
 */
interface FindingKeys {
  id: string;
  fp: string;
  q: string;
}
const keysOf = (f: ReviewFinding): FindingKeys => ({
  id: safe(f.id),
  fp: safe(f.fingerprint ?? "-"),
  q: normalize(f.evidence) ? sha256(`${f.critic}\u0000${normalize(f.evidence)}`).slice(0, 12) : "-",
});

/** The hidden marker an inline comment of dissent's starts with: whose, which finding, open or resolved, and the round that raised it. */
export const findingMarker = (key: string, k: FindingKeys, state: "open" | "resolved", since: string) =>
  `<!-- dissent:finding key=${safe(key)} id=${k.id} fp=${k.fp} q=${k.q} state=${state} since=${encodeURIComponent(since)} -->`;
const FINDING = /^<!-- dissent:finding key=(\S+) id=(\S+) fp=(\S+) q=(\S+) state=(open|resolved) since=(\S*) -->\n?/;

/** One of dissent's earlier inline comments, read back from its marker. */
interface OwnComment {
  ref: ReviewCommentRef;
  keys: FindingKeys;
  state: "open" | "resolved";
  since: string;
  /** The body without its marker. */
  text: string;
}

function ownComments(key: string, comments: readonly ReviewCommentRef[], reviews: readonly ReviewRef[]): OwnComment[] {
  // dissent's own: the marker, written by the user who posted dissent's reviews — a person quoting or copying a marker is not dissent.
  const authors = new Set(reviews.filter((r) => r.body.startsWith(reviewPrefix(key))).map((r) => r.login));
  const out: OwnComment[] = [];
  for (const c of comments) {
    const m = FINDING.exec(c.body);
    if (!m || m[1] !== safe(key) || !authors.has(c.login) || c.inReplyTo !== null) continue;
    let since = "";
    try {
      since = decodeURIComponent(m[6] ?? "");
    } catch {
      since = m[6] ?? "";
    }
    out.push({
      ref: c,
      keys: { id: m[2] ?? "", fp: m[3] ?? "", q: m[4] ?? "" },
      state: m[5] === "resolved" ? "resolved" : "open",
      since,
      text: c.body.slice(m[0].length),
    });
  }
  return out;
}

/** The earlier comment of a finding not yet claimed by another: by id, then fingerprint, then critic and quote. */
function earlierOf(f: ReviewFinding, own: readonly OwnComment[], claimed: Set<OwnComment>): OwnComment | undefined {
  const k = keysOf(f);
  const free = own.filter((c) => !claimed.has(c));
  return (
    free.find((c) => c.keys.id === k.id) ??
    (k.fp !== "-" ? free.find((c) => c.keys.fp === k.fp) : undefined) ??
    (k.q !== "-" ? free.find((c) => c.keys.q === k.q) : undefined)
  );
}

const footer = (since: string, label: string, again: boolean) =>
  `<sub>dissent · raised in ${since}${since === label ? "" : ` · ${again ? "raised again" : "still raised"} in ${label}`}</sub>`;

/** An open finding's inline comment; `again` when its earlier comment had been resolved. */
export function openComment(key: string, f: ReviewFinding, since: string, label: string, again = false): string {
  return `${findingMarker(key, keysOf(f), "open", since)}\n${findingText(f)}\n\n${footer(since, label, again)}`;
}

/** An earlier comment marked resolved: what it said kept, folded. */
export function resolvedComment(key: string, c: Pick<OwnComment, "keys" | "since" | "text">, label: string): string {
  const head = c.text.split("\n")[0] ?? "";
  const said = c.text.trim(); // what it said, with when it was raised
  return [
    findingMarker(key, c.keys, "resolved", c.since),
    `✅ **Resolved in ${label}**: its review no longer raises this.`,
    "",
    `<details><summary>${quoteLine(head.replace(/\*\*/g, "").replace(/`/g, ""), 200)}</summary>`,
    "",
    said,
    "",
    "</details>",
  ].join("\n");
}

const bounded = (text: string, max: number) =>
  text.length > max ? `${text.slice(0, max)}\n\n(cut: the review is longer than a pull request review holds)` : text;

/** The review's body: its head line, the notes, what is not inline, what was resolved. */
function reviewBody(r: RoundReview, inBody: readonly ReviewFinding[], stillOpen: readonly string[], resolved: readonly string[], inline: number): string {
  const met = r.verdicts.filter((v) => v.verdict === "met").length;
  const lines = [reviewMarker(r.subject.key, r.round.token), `### dissent · review of ${r.round.label}: ${findingCounts(r.findings)}`, ""];
  for (const n of r.notes ?? []) lines.push(n);
  if (r.criteria.length) lines.push(`Acceptance criteria: ${met} of ${r.criteria.length} met.`);
  if (inline) lines.push(`${inline} finding${inline === 1 ? " is" : "s are"} inline, on the line${inline === 1 ? "" : "s"} quoted.`);
  if (stillOpen.length) lines.push(`Still raised, on their earlier comments: ${stillOpen.map((id) => `\`${id}\``).join(", ")}.`);
  if (resolved.length) lines.push(`Resolved since the last review: ${resolved.map((id) => `\`${id}\``).join(", ")}.`);
  if (inBody.length) {
    lines.push("", "#### Not on a line of the diff");
    for (const f of inBody) lines.push("", `- ${findingLine(f)}`);
  }
  if (r.detailsUrl) lines.push("", `[The whole review on the dashboard](${r.detailsUrl})`);
  return bounded(lines.join("\n"), REVIEW_BODY_CHARS);
}

/**
 * Posts one round's review (docs/adr/037). Earlier comments are updated first — still raised, or
 * resolved — then the review is created: `COMMENT`, or `REQUEST_CHANGES` while a finding blocks and
 * `review.event` says so. What GitHub refuses is handled, never thrown: a change request on the
 * token's own pull request becomes a comment; inline comments GitHub cannot place (a line not in
 * its diff) go into the body. A round that blocks nothing dismisses dissent's earlier change requests.
 */
export async function postRoundReview(port: PullRequestPort, r: RoundReview, warn?: (m: string) => void): Promise<PostedReview> {
  const { key, pull, commit } = r.subject;
  const label = r.round.label;
  const out: PostedReview = { review: null, event: null, inline: [], inBody: [], updated: [], resolved: [], dismissed: [], fallbacks: [] };
  const [reviews, comments] = await Promise.all([port.reviews(pull), port.reviewComments(pull)]);
  const own = ownComments(key, comments, reviews);
  const onDiff = r.diff !== null && commit !== null;
  const files = onDiff && r.diff !== null ? parseDiff(r.diff) : [];
  const min = SEVERITY_RANK[r.settings.inlineMinSeverity];

  // Each finding: its earlier comment updated, a new inline comment, or a line of the body.
  const inline: { f: ReviewFinding; at: DiffAnchor }[] = [];
  const inBody: ReviewFinding[] = [];
  const stillOpen: string[] = [];
  const updates: { c: OwnComment; body: string; kind: "updated" | "resolved" }[] = [];
  const claimed = new Set<OwnComment>();
  for (const f of r.findings) {
    const earlier = earlierOf(f, own, claimed);
    if (earlier) {
      claimed.add(earlier);
      updates.push({ c: earlier, body: openComment(key, f, earlier.since || label, label, earlier.state === "resolved"), kind: "updated" });
      stillOpen.push(f.id);
      continue;
    }
    const at = onDiff && SEVERITY_RANK[f.severity] >= min && inline.length < MAX_INLINE_COMMENTS ? locateQuote(files, f.evidence) : undefined;
    if (at) inline.push({ f, at });
    else inBody.push(f);
  }
  for (const c of own) if (!claimed.has(c) && c.state === "open") updates.push({ c, body: resolvedComment(key, c, label), kind: "resolved" });

  for (const u of updates) {
    if (u.c.ref.body === u.body) {
      (u.kind === "updated" ? out.updated : out.resolved).push(u.c.keys.id);
      continue;
    }
    const done = await port.updateReviewComment(u.c.ref.id, u.body);
    if (isRefused(done)) {
      warn?.(`could not update dissent's comment on ${u.c.keys.id} in pull request #${pull} (GitHub: ${done.refused} ${done.errors.join("; ")})`);
      continue;
    }
    (u.kind === "updated" ? out.updated : out.resolved).push(u.c.keys.id);
  }

  const marker = reviewMarker(key, r.round.token);
  const posted = reviews.find((x) => x.body.startsWith(marker));
  if (posted) {
    out.review = null; // this round's review is out already (a resumed run)
  } else {
    const blocking = r.findings.some((f) => f.blocking);
    let event: "COMMENT" | "REQUEST_CHANGES" = r.settings.event === "REQUEST_CHANGES" && blocking ? "REQUEST_CHANGES" : "COMMENT";
    let placed = inline;
    const bodyOf = () => reviewBody(r, [...inBody, ...inline.filter((x) => !placed.includes(x)).map((x) => x.f)], stillOpen, out.resolved, placed.length);
    const commentsOf = (): NewReviewComment[] =>
      placed.map(({ f, at }) => ({
        path: at.path,
        line: at.line,
        side: at.side,
        ...(at.startLine !== undefined ? { start_line: at.startLine, start_side: at.side } : {}),
        body: openComment(key, f, label, label),
      }));
    for (let tries = 0; tries < 3; tries++) {
      const made = await port.createReview(pull, { ...(commit !== null ? { commitId: commit } : {}), body: bodyOf(), event, comments: commentsOf() });
      if (!isRefused(made)) {
        out.review = made.id;
        out.event = event;
        break;
      }
      const why = made.errors.join("; ") || `status ${made.refused}`;
      if (event === "REQUEST_CHANGES" && /own pull request/i.test(why)) {
        out.fallbacks.push({ kind: "own_pull_request", detail: "GitHub refuses a change request on the token's own pull request: commented instead" });
        event = "COMMENT";
        continue;
      }
      if (placed.length) {
        out.fallbacks.push({
          kind: "inline_refused",
          detail: `GitHub could not place the inline comments (${quoteLine(why, 200)}): they are in the review's body`,
        });
        placed = [];
        continue;
      }
      warn?.(`GitHub refused dissent's review of ${label} on pull request #${pull}: ${quoteLine(why, 300)}`);
      break;
    }
    out.inline = placed.map((x) => x.f.id);
    out.inBody = [...inBody, ...inline.filter((x) => !placed.includes(x)).map((x) => x.f)].map((f) => f.id);
  }

  // Nothing blocks now: dissent's earlier change requests no longer stand.
  if (!r.findings.some((f) => f.blocking)) {
    for (const x of reviews) {
      if (x.state !== "CHANGES_REQUESTED" || !x.body.startsWith(reviewPrefix(key))) continue;
      const done = await port.dismissReview(pull, x.id, `dissent: the review of ${label} finds nothing blocking.`);
      if (isRefused(done))
        warn?.(`could not dismiss dissent's earlier change request on pull request #${pull} (GitHub: ${done.refused} ${done.errors.join("; ")})`);
      else out.dismissed.push(x.id);
    }
  }
  return out;
}
