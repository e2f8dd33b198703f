import { Lexer, type Token, type Tokens } from "marked";

/**
 * An issue's text as its author wrote it in words (docs/issue.md "ComplexityGate"): `text` is what
 * a reader reads — code spans and bare links kept, so an excerpt reads as the sentence — and
 * `prose` is the same string, character for character, with everything that is not prose blanked
 * out: fenced and indented code blocks (dropped whole), inline code, raw HTML (template comments),
 * link addresses, bare URLs, and identifiers (camelCase, PascalCase with an inner capital,
 * snake_case, dotted names, paths and branch names, calls). A keyword counts only in `prose`.
 */
export interface IssueProse {
  text: string;
  prose: string;
}

/** Identifiers in running text: they name code, not what the issue is about. Linear, no backtracking across words. */
const IDENTIFIER = new RegExp(
  [
    String.raw`[\w$@~-]*[/\\][\w$@~./\\-]*`, // paths, branch names, scoped packages (`feat/refactor-loader`, `src/api.ts`)
    String.raw`[\w$-]+(?:\.[\w$-]+)+`, // dotted names and file names (`api.get`, `package.json`, `v1.2.3`)
    String.raw`[\w$]*_[\w$]*`, // snake_case, SCREAMING_CASE (`api_key`, `AUTH_TOKEN`)
    String.raw`[a-z][a-z0-9]*[A-Z][\w$]*`, // camelCase (`apiClient`, `refactorConfig`)
    String.raw`[A-Z][a-z0-9]+[A-Z][\w$]*`, // PascalCase with an inner capital (`ApiClient`), never `OAuth` or `API`
    String.raw`[\w$]+\(\)`, // a call (`login()`)
  ]
    // A match starts only where a token starts (never inside `a-b-c…`), so every token is tried once: linear.
    .map((p) => `(?<![\\w$@~./\\\\-])(?:${p})`)
    .join("|"),
  "g",
);

const blank = (s: string) => s.replace(/[^\n]/g, " ");

/**
 * What a markdown parser cannot read (marked overflows its stack on thousands of nested quotes), read
 * plainly: fenced blocks, inline code, HTML comments and bare URLs blanked by linear patterns.
 */
function plainProse(text: string): IssueProse {
  const prose = text
    .replace(/^ {0,3}```[^\n]*\n[\s\S]*?(?:^ {0,3}```[^\n]*$|(?![\s\S]))/gm, blank)
    .replace(/<!--[\s\S]*?(?:-->|(?![\s\S]))/g, blank)
    .replace(/`[^`\n]*`/g, blank)
    .replace(/(?:\b[a-z][\w+.-]*:\/\/|\bwww\.)\S+/gi, blank);
  return { text, prose: prose.replace(IDENTIFIER, blank) };
}

/** Reads one markdown text (an issue title or body) into its prose. */
export function issueProse(markdown: string, inline = false): IssueProse {
  let text = "";
  let prose = "";
  const put = (s: string, isProse: boolean) => {
    text += s;
    prose += isProse ? s : blank(s);
  };
  const walk = (tokens: readonly Token[]) => {
    for (const t of tokens) visit(t);
  };
  const block = (tokens: readonly Token[] | undefined) => {
    walk(tokens ?? []);
    put("\n", true);
  };
  const visit = (t: Token): void => {
    switch (t.type) {
      case "code": // a fenced or indented block: not a sentence at all
      case "html": // raw HTML, an issue template's <!-- comments -->
      case "image":
      case "def":
      case "hr":
      case "space":
        return;
      case "codespan":
        put((t as Tokens.Codespan).text, false);
        return;
      case "br":
        put("\n", true);
        return;
      case "link": {
        const link = t as Tokens.Link;
        // A bare URL (or <url>): its text is the address. A [text](url) link: the text is prose, the address is not.
        if (link.text === link.href || "autolink" in link || /^(?:[a-z][\w+.-]*:|www\.)/i.test(link.text)) put(link.text, false);
        else walk(link.tokens);
        return;
      }
      case "list":
        for (const item of (t as Tokens.List).items) block(item.tokens);
        return;
      case "table": {
        const table = t as Tokens.Table;
        for (const cell of [...table.header, ...table.rows.flat()]) block(cell.tokens);
        return;
      }
      case "paragraph":
      case "heading":
      case "blockquote":
        block((t as Tokens.Paragraph).tokens);
        return;
      default:
        if ("tokens" in t && Array.isArray(t.tokens)) walk(t.tokens as Token[]);
        else if ("text" in t && typeof t.text === "string") put(t.text, true);
        else if ("raw" in t && typeof t.raw === "string") put(t.raw, true);
    }
  };
  let tokens: Token[];
  try {
    tokens = inline ? Lexer.lexInline(markdown, { gfm: true }) : Lexer.lex(markdown, { gfm: true });
  } catch {
    return plainProse(markdown); // what the parser could not read is still read, without its structure
  }
  walk(tokens);
  return { text, prose: prose.replace(IDENTIFIER, blank) };
}

/** Whether a sentence ends just before `i` of `text` (a full stop, ! or ? followed by a space) or a line does. */
const endsBefore = (text: string, i: number) => text[i - 1] === "\n" || (/[.!?]/.test(text[i - 1] ?? "") && /\s/.test(text[i] ?? ""));

/** The sentence of `text` around the match at `at`, on one line, cut to about `max` characters around the match. */
export function excerptAt(text: string, at: number, length: number, max = 80): string {
  let start = at;
  while (start > 0 && !endsBefore(text, start)) start--;
  let end = at + length;
  while (end < text.length && !endsBefore(text, end + 1) && text[end] !== "\n") end++;
  if (end < text.length && text[end] !== "\n") end++; // the full stop itself
  const sentence = text.slice(start, end).replace(/\s+/g, " ").trim();
  if (sentence.length <= max) return sentence;
  // Too long: a window of `max` characters around the match, with an ellipsis where it was cut.
  const offset = text.slice(start, at).replace(/\s+/g, " ").trimStart().length;
  const from = Math.max(0, Math.min(offset - Math.floor((max - length) / 2), sentence.length - max));
  return `${from > 0 ? "…" : ""}${sentence.slice(from, from + max).trim()}${from + max < sentence.length ? "…" : ""}`;
}
