import { isGithubTracker } from "../trackers/github.js";
import { json, withDissent, type Common } from "./common.js";
import { terminalSafe } from "../terminal.js";
import type { Io } from "./io.js";

/**
 * `dissent github comment --event FILE` (docs/github-action.md): handles the `/dissent` command of
 * one `issue_comment` event payload, as the Action runs it. Exit 0 when the command ran, was refused,
 * was mistyped (answered with the nearest command), was not a command or was handled before; 1 when
 * the command failed. `plan_url` is the address of dissent's plan comment on the issue (null before
 * it has one).
 */
export async function githubComment(opts: Common & { event: string }, io: Io): Promise<number> {
  const { readCommentEvent } = await import("../github/event.js");
  const event = readCommentEvent(opts.event); // a bad payload is one line before anything opens
  return withDissent(opts, io, async (d) => {
    const { handleCommentEvent } = await import("../github/handle-comment.js");
    const out = await handleCommentEvent(d, event);
    if (opts.json) {
      const tracker = await d.tracker();
      // Ignored comments ask GitHub nothing, not even this.
      const plan_url = out.status !== "ignored" && isGithubTracker(tracker) ? await tracker.planUrl(out.issue) : null;
      json(io, { ...out, plan_url });
    } else io.stdout(`issue ${out.issue}, comment ${out.comment_id}: ${out.status}: ${terminalSafe(out.detail)}\n`);
    return out.status === "failed" ? 1 : 0;
  });
}

/**
 * `dissent github closed --event FILE` (docs/github-action.md "When an issue closes"): an `issues`
 * event payload whose issue a merged pull request closed records the merge, as `dissent issue merged`
 * does. Exit 0 whether or not it was a merge; 1 or 2 when recording it failed.
 */
export async function githubClosed(opts: Common & { event: string }, io: Io): Promise<number> {
  const { readIssuesEvent } = await import("../github/event.js");
  const event = readIssuesEvent(opts.event);
  return withDissent(opts, io, async (d) => {
    const { handleClosedEvent } = await import("../github/handle-closed.js");
    const out = await handleClosedEvent(d, event);
    if (opts.json) json(io, out);
    else io.stdout(`issue ${out.issue}: ${out.status}: ${terminalSafe(out.detail)}\n`);
    return 0;
  });
}
