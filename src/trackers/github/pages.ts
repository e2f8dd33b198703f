import { RunError } from "../../errors.js";

/** The most pages one listing reads (100 items each: 10,000 items), said in a warning when reached (docs/limits.md). */
export const MAX_PAGES = 100;

/** One page of a listing as Octokit returns it. */
export interface Page<T> {
  data: T[];
  headers: { link?: string | undefined };
}

/** The `rel="next"` URL of a `Link` header, if there is one. */
export function nextLink(link: string | undefined): string | undefined {
  if (!link) return undefined;
  for (const part of link.split(",")) {
    const m = /<([^>]*)>\s*;\s*rel="?([^";]*)"?/.exec(part.trim());
    if (m?.[2]?.split(/\s+/).includes("next")) return m[1];
  }
  return undefined;
}

/** How a listing is read: the first page, the next ones by URL, and where warnings go. */
export interface PagesOptions<T> {
  /** Names the listing in messages ("listing open issues"). */
  action: string;
  repo: string;
  /** The configured API's base URL: only next-page links on its origin are followed (they carry the token). */
  baseUrl: string;
  maxPages?: number;
  first(): Promise<Page<T>>;
  next(url: string): Promise<Page<T>>;
  warn?: (message: string) => void;
}

/**
 * Every page of a GitHub listing, bounded (issue 20 item 7): at most `maxPages` pages, the rest left
 * with a warning (an API that always answers `rel="next"` cannot keep a poll going forever); a next
 * link to another origin is an error, never followed — Octokit's own paginate would send it the token.
 */
export async function readPages<T>(o: PagesOptions<T>): Promise<T[]> {
  const max = o.maxPages ?? MAX_PAGES;
  const origin = new URL(o.baseUrl).origin;
  const out: T[] = [];
  let page = await o.first();
  for (let n = 1; ; n++) {
    out.push(...page.data);
    const next = nextLink(page.headers.link);
    if (next === undefined) return out;
    const target = URL.canParse(next) ? new URL(next).origin : "a URL that does not parse";
    if (target !== origin)
      throw new RunError(
        `GitHub answered ${o.action} for ${o.repo} with a next-page link to ${target}, not ${origin}: not followed (it would carry the token); check tracker.base_url and any proxy in front of it`,
      );
    if (n >= max) {
      o.warn?.(`${o.action} for ${o.repo}: stopped after ${max} pages (${out.length} items); the rest is not read this time`);
      return out;
    }
    page = await o.next(next);
  }
}
