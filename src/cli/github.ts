import { json, withDissent, type Common } from "./common.js";
import { safe, type Io } from "./io.js";

/**
 * `dissent github comment --event FILE` (docs/github-action.md): handles the `/dissent` command of
 * one `issue_comment` event payload, as the Action runs it. Exit 0 when the command ran, was refused,
 * was not a command or was handled before; 1 when the command failed.
 */
export async function githubComment(opts: Common & { event: string }, io: Io): Promise<number> {
  const { readCommentEvent } = await import("../github/event.js");
  const event = readCommentEvent(opts.event); // a bad payload is one line before anything opens
  return withDissent(opts, io, async (d) => {
    const { handleCommentEvent } = await import("../github/handle-comment.js");
    const out = await handleCommentEvent(d, event);
    const plan_url = event.issue.html_url ?? null;
    if (opts.json) json(io, { ...out, plan_url });
    else io.stdout(`issue ${out.issue}, comment ${out.comment_id}: ${out.status}: ${safe(out.detail)}\n`);
    return out.status === "failed" ? 1 : 0;
  });
}
