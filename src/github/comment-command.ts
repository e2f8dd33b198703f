import type * as Levenshtein from "fastest-levenshtein";
import { RESOLUTION_KINDS, type ResolutionKind } from "../contracts/concern.js";
import { lazyRequire } from "../lazy-require.js";
import { Lexer, type Tokens } from "marked";

/** The edit distance, loaded on the first mistyped command. */
const levenshtein: () => typeof Levenshtein = lazyRequire("fastest-levenshtein");

/**
 * A `/dissent` comment command (docs/github-action.md), as read from an issue comment. Only a
 * visible line of the comment's own text counts: a quoted line (`>`), a line in a code block or
 * inside raw HTML is somebody showing a command (or hiding one), not giving one.
 */
export type CommentCommand =
  | { name: "plan" }
  | { name: "replan" }
  | { name: "route"; label: "dissent-trivial" | "dissent-load-bearing" }
  | { name: "resolve"; concern: string; kind: ResolutionKind; said: string; note: string }
  | { name: "implement" }
  | { name: "review" }
  | { name: "unknown"; text: string };

/** The words a maintainer writes after `/dissent resolve ID`, and the resolution each records (docs/github-action.md). */
export const RESOLVE_WORDS: Readonly<Record<string, ResolutionKind>> = {
  fixed: "addressed-in-code",
  accepted: "deferred", // the risk is accepted: shipped knowingly
  rejected: "ignored", // not a real problem
  ...Object.fromEntries(RESOLUTION_KINDS.map((k) => [k, k])),
};

/** A comment body is read up to here (GitHub's own limit is 65,536 characters). */
const MAX_BODY = 65_536;
const COMMAND_LINE = /^\/dissent(?:\s+(.*))?$/;

/** Elements with no closing tag: they open nothing a command could hide in. */
const VOID = new Set(["area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"]);

/**
 * How many HTML elements a piece of raw HTML leaves open (negative when it closes more than it
 * opens): what follows an unclosed `<details>` is folded away on GitHub, so it is not seen.
 */
function openedBy(html: string): number {
  let depth = 0;
  const tags = html.replace(/<!--[\s\S]*?(?:-->|$)/g, "").matchAll(/<(\/?)([A-Za-z][A-Za-z0-9-]*)\b[^>]*?(\/?)>/g);
  for (const [, close, name = "", self] of tags) {
    if (VOID.has(name.toLowerCase()) || self) continue;
    depth += close ? -1 : 1;
  }
  return depth;
}

/** A top-level paragraph's text as GitHub shows it: plain text and escapes; code, emphasis and links are not a command's words. */
function shownText(p: Tokens.Paragraph): string {
  return p.tokens.map((t) => (t.type === "text" || t.type === "escape" ? t.text : t.type === "br" ? "\n" : "\u0000")).join("");
}

/**
 * The lines of a comment that are its own words, as the rendered markdown shows them (marked's
 * lexer): lines of top-level paragraphs only. A quote (with its lazy continuation lines), a list,
 * code (fenced or indented), a heading, raw HTML — an HTML comment, `<pre>`, `<details>` and what
 * an unclosed element holds — and a paragraph holding raw HTML give none: a maintainer who pastes
 * someone else's text does not run a command they never saw.
 */
function ownLines(body: string): string[] {
  const out: string[] = [];
  let depth = 0; // HTML elements left open by earlier blocks
  for (const t of new Lexer({ gfm: true }).lex(body.slice(0, MAX_BODY))) {
    if (t.type === "html") depth = Math.max(0, depth + openedBy(t.raw));
    else if (t.type === "paragraph") {
      const p = t as Tokens.Paragraph;
      const html = p.tokens.filter((x) => x.type === "html");
      if (html.length) depth = Math.max(0, depth + openedBy(html.map((x) => x.raw).join("")));
      else if (depth === 0)
        out.push(
          ...shownText(p)
            .split(/\r?\n/)
            .map((l) => l.trim()),
        );
    }
  }
  return out;
}

/** Reads one command's words. */
function commandOf(words: string): CommentCommand {
  const [name = "", ...rest] = words.split(/\s+/).filter(Boolean);
  switch (name.toLowerCase()) {
    case "plan":
      return { name: "plan" };
    case "replan":
      return { name: "replan" };
    case "trivial":
      return { name: "route", label: "dissent-trivial" };
    case "load-bearing":
      return { name: "route", label: "dissent-load-bearing" };
    case "implement":
      return { name: "implement" };
    case "review":
      return { name: "review" };
    case "resolve": {
      const [concern, said, ...note] = rest;
      const kind = said === undefined ? undefined : RESOLVE_WORDS[said.toLowerCase()];
      if (!concern || !said || !kind) return { name: "unknown", text: `resolve ${rest.join(" ")}`.trim() };
      return { name: "resolve", concern, kind, said: said.toLowerCase(), note: note.join(" ") };
    }
    default:
      return { name: "unknown", text: words.trim() };
  }
}

/** The first command a comment gives, or undefined when it gives none. */
export function parseCommentCommand(body: string): CommentCommand | undefined {
  for (const line of ownLines(body)) {
    const m = COMMAND_LINE.exec(line);
    if (m) return commandOf((m[1] ?? "").slice(0, 2_000));
  }
  return undefined;
}

/** How a command reads back in a reply: `/dissent resolve C-1 fixed`. */
export function commandText(c: CommentCommand): string {
  switch (c.name) {
    case "route":
      return `/dissent ${c.label === "dissent-trivial" ? "trivial" : "load-bearing"}`;
    case "resolve":
      return `/dissent resolve ${c.concern} ${c.said}`;
    case "unknown":
      return `/dissent ${c.text}`.slice(0, 200);
    default:
      return `/dissent ${c.name}`;
  }
}

/** The command words, as a maintainer writes them. */
export const COMMAND_WORDS = ["plan", "replan", "trivial", "load-bearing", "resolve", "implement", "review"] as const;

/** How `resolve` is written, for a reply that cannot guess the rest. */
const RESOLVE_USAGE = "/dissent resolve CONCERN-ID fixed|accepted|rejected [note]";

/** The word of `words` nearest to `word` when it is near enough to be a typo of it: two edits at most (one for a word under four letters), `paln` → `plan`. */
function nearest(word: string, words: readonly string[]): string | undefined {
  const lower = word.toLowerCase();
  if (!lower) return undefined;
  const best = levenshtein().closest(lower, [...words]);
  return levenshtein().distance(lower, best) <= (best.length >= 4 ? 2 : 1) ? best : undefined;
}

/**
 * The command a mistyped one most likely meant (docs/github-action.md "A mistyped command"):
 * `/dissent paln` → `/dissent plan`, `/dissent resolve C-3 fixd` → `/dissent resolve C-3 fixed`; the
 * usage of `resolve` when its concern or word is missing; undefined when nothing is near.
 */
export function suggestCommand(text: string): string | undefined {
  const [name = "", ...rest] = text.split(/\s+/).filter(Boolean);
  const word = nearest(name, COMMAND_WORDS);
  if (!word) return undefined;
  if (word !== "resolve") return `/dissent ${word}`;
  const [concern, said, ...note] = rest;
  const kind = said === undefined ? undefined : nearest(said, Object.keys(RESOLVE_WORDS));
  if (!concern || !kind) return RESOLVE_USAGE;
  return ["/dissent resolve", concern, kind, ...note].join(" ").slice(0, 200);
}
