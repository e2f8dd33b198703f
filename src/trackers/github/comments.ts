import type { GithubSession } from "./client.js";
import { statusOf } from "./errors.js";

/** dissent's comments on an issue, one per marker. */
export interface CommentWriter {
  /** Writes the marker's comment: updated in place (left alone when unchanged), posted when missing or deleted. */
  write(n: number, marker: string, body: string): Promise<void>;
  /** The web address of the marker's comment (`…/issues/12#issuecomment-…`), or null when the issue has none. */
  urlOf(n: number, marker: string): Promise<string | null>;
}

/**
 * dissent's comments on issues, one per marker: found by the marker that starts the body,
 * updated in place (left alone when unchanged), posted when missing or deleted.
 */
export function commentWriter(s: GithubSession): CommentWriter {
  const { owner, repo } = s;
  /** As last written or read in this process. */
  const known = new Map<string, { id: number; body: string; url: string | null }>();

  const find = async (n: number, marker: string) => {
    const seen = known.get(`${n} ${marker}`);
    if (seen) return seen;
    const all = await s.pages(`reading the comments of issue #${n}`, (gh, request) =>
      gh.rest.issues.listComments({ owner, repo, issue_number: n, per_page: 100, request }),
    );
    const found = all.find((c) => c.body?.startsWith(marker)); // a person quoting it starts with "> "
    return found ? { id: found.id, body: found.body ?? "", url: found.html_url ?? null } : undefined;
  };

  const write = async (n: number, marker: string, body: string) => {
    const key = `${n} ${marker}`;
    const found = await find(n, marker);
    if (found?.body === body) return;
    if (found) {
      const updated = await s.step(`updating dissent's comment on issue #${n}`, async (gh) => {
        try {
          return (await gh.rest.issues.updateComment({ owner, repo, comment_id: found.id, body })).data.html_url ?? found.url;
        } catch (e) {
          if (statusOf(e) === 404) return false; // deleted since: post it again
          throw e;
        }
      });
      if (updated !== false) {
        known.set(key, { id: found.id, body, url: updated });
        return;
      }
    }
    const { data } = await s.step(`commenting on issue #${n}`, (gh) => gh.rest.issues.createComment({ owner, repo, issue_number: n, body }));
    known.set(key, { id: data.id, body, url: data.html_url ?? null });
  };

  return {
    write,
    async urlOf(n, marker) {
      const found = await find(n, marker);
      if (found) known.set(`${n} ${marker}`, found);
      return found?.url ?? null;
    },
  };
}
