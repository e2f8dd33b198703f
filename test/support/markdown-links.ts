/**
 * The links of markdown files, checked against a set of files rather than a disk: what a reader of
 * the packed package (node_modules/dissent/) can follow. A link is relative unless it has a scheme;
 * an anchor must name a heading of its page by GitHub's slug (duplicates numbered -1, -2, as GitHub
 * numbers them).
 */
import { posix } from "node:path";
import GithubSlugger from "github-slugger";
import { marked, type Token, type Tokens } from "marked";

/** The plain text of a heading's inline tokens, as GitHub renders it before slugging. */
function plain(tokens: readonly Token[]): string {
  return tokens
    .map((t) => {
      const inner = (t as { tokens?: Token[] }).tokens;
      if (inner?.length) return plain(inner);
      return t.type === "codespan" || t.type === "text" || t.type === "escape" ? (t as Tokens.Text).text : "";
    })
    .join("");
}

/** The anchors GitHub gives a page's headings. */
export function anchorsIn(markdown: string): Set<string> {
  const slugger = new GithubSlugger();
  const found = new Set<string>();
  marked.walkTokens(marked.lexer(markdown), (t) => {
    if (t.type === "heading") found.add(slugger.slug(plain((t as Tokens.Heading).tokens)));
  });
  return found;
}

/** Every link and image target of a page (inline and reference-style, as marked resolves them). */
export function linksIn(markdown: string): string[] {
  const out: string[] = [];
  marked.walkTokens(marked.lexer(markdown), (t) => {
    if (t.type === "link" || t.type === "image") out.push((t as Tokens.Link).href);
  });
  return out;
}

/**
 * What is broken among the relative links of `pages` (paths relative to the package root, `/`
 * separated), when the package holds exactly `files` and `read` gives a page's text: one line per
 * broken link, `page: target: why`.
 */
export function brokenLinks(pages: readonly string[], files: readonly string[], read: (path: string) => string): string[] {
  const held = new Set(files);
  const folders = new Set(
    files.flatMap((f) =>
      f
        .split("/")
        .slice(0, -1)
        .map((_, i, parts) => parts.slice(0, i + 1).join("/")),
    ),
  );
  const anchors = new Map<string, Set<string>>();
  const anchorsOf = (page: string) => {
    let a = anchors.get(page);
    if (!a) anchors.set(page, (a = anchorsIn(read(page))));
    return a;
  };
  const broken: string[] = [];
  for (const page of pages) {
    for (const href of linksIn(read(page))) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(href)) continue; // https:, mailto:: not part of the package
      const [path = "", anchor] = href.split("#");
      const target = path === "" ? page : posix.normalize(posix.join(posix.dirname(page), decodeURIComponent(path))).replace(/\/$/, "");
      if (target.startsWith("..")) broken.push(`${page}: ${href}: outside the package`);
      else if (!held.has(target) && !folders.has(target)) broken.push(`${page}: ${href}: not in the package`);
      else if (anchor !== undefined && target.endsWith(".md") && held.has(target) && !anchorsOf(target).has(anchor))
        broken.push(`${page}: ${href}: no such heading`);
    }
  }
  return broken;
}
