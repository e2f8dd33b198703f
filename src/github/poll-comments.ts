import type { Dissent } from "../dissent.js";
import { isGithubTracker } from "../trackers/github.js";
import { parseCommentCommand } from "./comment-command.js";
import { type CommentOutcome, handleCommentEvent } from "./handle-comment.js";

/** How far back the factory's first poll reads comments: commands given while it was down are still handled. */
export const COMMENT_LOOKBACK_MS = 60 * 60 * 1000;

/**
 * The factory's reader of comment commands (docs/github-action.md): each poll lists the repository's
 * issue comments since the last poll (one listing, not one per issue) and handles every `/dissent`
 * command on an open issue exactly as `dissent github comment` does; the store's record of handled
 * comment ids makes the overlap between polls harmless. An edited comment is not a command, as the
 * Action ignores an `edited` event: the listing's `since` matches on `updated_at`, so an old
 * comment edited to hold a command would otherwise be run.
 */
export function commentPoller(d: Dissent, o: { now?: () => number; told: (o: CommentOutcome) => void }): () => Promise<void> {
  const now = o.now ?? Date.now;
  let since = now() - COMMENT_LOOKBACK_MS;
  return async () => {
    const tracker = await d.tracker();
    if (!isGithubTracker(tracker)) return;
    const started = now();
    const comments = (await tracker.commentsSince(new Date(since).toISOString())).filter((c) => !c.edited && parseCommentCommand(c.body));
    if (comments.length) {
      const open = new Set((await tracker.list()).map((i) => i.id)); // pull requests and closed issues are not commanded
      for (const c of comments) {
        if (!open.has(String(c.issue))) continue;
        const out = await handleCommentEvent(d, {
          action: "created",
          comment: { id: c.id, body: c.body, user: { login: c.login, type: c.userType } },
          issue: { number: c.issue },
          repository: { full_name: tracker.name },
        });
        if (out.status !== "duplicate" && out.status !== "ignored") o.told(out); // the overlap between polls is not news
      }
    }
    since = started - 60_000; // a minute of overlap: a comment created while the listing ran is read next time
  };
}
