import type { Dissent } from "../dissent.js";
import { DissentError, Interrupted, messageOf, UsageError } from "../errors.js";
import { type GithubTracker, isGithubTracker } from "../trackers/github.js";
import { MAY_COMMAND } from "../trackers/github/commands.js";
import { type CommentCommand, commandText, parseCommentCommand, suggestCommand } from "./comment-command.js";
import type { IssueCommentEvent } from "./event.js";

/** What handling one comment came to (docs/github-action.md). */
export interface CommentOutcome {
  /**
   * `done`, `refused` (no write permission), `failed` (the command could not run), `unknown` (a
   * mistyped command: answered with the nearest one, nothing run), `ignored` (not a command),
   * `duplicate` (handled before).
   */
  status: "done" | "refused" | "failed" | "unknown" | "ignored" | "duplicate";
  issue: string;
  comment_id: number;
  command: string | null;
  /** The one-line answer, as posted on the issue. */
  detail: string;
  /** The plan's status after the command, when the issue has a plan. */
  plan_status: "ready" | "needs_replan" | "hitl" | null;
}

/** Runs an accepted command; returns the answer's one line. */
type Runner = (c: CommentCommand, ctx: { d: Dissent; tracker: GithubTracker; id: string; login: string }) => Promise<string>;

const USAGE =
  "commands: plan, replan, trivial, load-bearing, resolve CONCERN-ID fixed|accepted|rejected [note], implement on an issue; review on a pull request";

/** The answer to a mistyped command: what was not understood, the nearest command, every command. */
function unknownAnswer(login: string, c: Extract<CommentCommand, { name: "unknown" }>): string {
  const near = suggestCommand(c.text);
  const said = c.text ? `\`${commandText(c)}\` is not a command dissent knows` : "`/dissent` needs a command";
  return `@${login}: ${said}${near ? `; did you mean \`${near}\`?` : "."} Nothing was run (${USAGE}).`;
}

/** The command's work, through the library (the same pipeline, store and tracker as the CLI). */
const runCommand: Runner = async (c, { d, tracker, id, login }) => {
  switch (c.name) {
    case "plan":
    case "replan": {
      const r = await d.planIssue(id, c.name === "replan" ? { replan: true } : {});
      return `planned: ${r.status}, ${r.pending_concerns.length} pending concern${r.pending_concerns.length === 1 ? "" : "s"}`;
    }
    case "route": {
      const other = c.label === "dissent-trivial" ? "dissent-load-bearing" : "dissent-trivial";
      const before = (await tracker.get(id)).labels;
      const labels = await tracker.setLabels(id, { add: [c.label], remove: [other] });
      const added = [c.label].filter((l) => !before.includes(l));
      const removed = [other].filter((l) => before.includes(l) && !labels.includes(l));
      if (added.length || removed.length) await (await d.store()).append([{ type: "LabelChanged", issue_id: id, added, removed, labels }]);
      return `labelled ${c.label}: the next plan's ComplexityGate follows it`;
    }
    case "resolve": {
      const r = await d.issues.resolve(id, c.concern, c.kind, `@${login} on GitHub${c.note ? `: ${c.note}` : ""}`);
      return `concern ${r.concern_id} resolved (${c.said}: ${r.resolution_kind})`;
    }
    case "implement": {
      // The implement phase runs only where the config has an implement: section (docs/implement.md).
      if (!d.config.implement) throw new UsageError(`the implement phase is not configured: ${d.config.source} has no implement: section (docs/implement.md)`);
      const r = await d.implementIssue(id);
      const where = r.pull_request.url ?? `branch ${r.branch}`;
      return `implemented: ${r.status}, ${where}, ${r.pending_concerns.length} unresolved concern${r.pending_concerns.length === 1 ? "" : "s"}`;
    }
    case "review": // on a pull request's comments only (handleCommentEvent)
      throw new UsageError("`/dissent review` reviews a pull request: comment it on the pull request");
    case "unknown": // answered before any work (unknownAnswer); never run
      throw new UsageError(`unknown command '${commandText(c)}'; ${USAGE}`);
  }
};

/** `/dissent review` on a pull request: the review and the check go on it; the answer is one line. */
async function reviewCommand(d: Dissent, pull: number): Promise<string> {
  const r = await d.reviewPullRequest(pull);
  if (r.status === "empty") return "the pull request changes nothing: nothing to review";
  const blocking = r.findings.filter((f) => f.blocking).length;
  const against = r.contract.kind === "plan" ? `issue ${r.contract.issue}'s plan` : "its description";
  return `reviewed ${r.head.slice(0, 7)} against ${against}: ${r.status}, ${r.findings.length} finding${r.findings.length === 1 ? "" : "s"} (${blocking} blocking)${r.check ? `, check ${r.check}` : ""}${r.review ? "" : " (this head was reviewed before)"}`;
}

/** Updates the plan comment with the answer when the issue has a plan; else dissent's reply comment. Returns the plan's status. */
async function answer(d: Dissent, tracker: GithubTracker, id: string, note: string): Promise<CommentOutcome["plan_status"]> {
  const detail = await d.issues.show(id);
  const status = detail.status === "ready" || detail.status === "needs_replan" || detail.status === "hitl" ? detail.status : null;
  if (status && detail.route && detail.plan !== null) {
    await tracker.publishPlan(id, {
      status,
      route: detail.route,
      plan: detail.plan,
      acceptanceCriteria: detail.acceptance_criteria,
      pendingConcerns: detail.pending_concerns,
      note,
    });
    return status;
  }
  await tracker.reply(id, note);
  return null;
}

/**
 * Handles one `issue_comment` event (docs/github-action.md): a `/dissent` command in a new comment,
 * from a user with write permission on the repository (asked of the API), is acknowledged with a
 * reaction, run through the library and answered by updating the plan comment; anyone else gets
 * one reply. A comment is handled once: its id is recorded in the store.
 */
export async function handleCommentEvent(d: Dissent, event: IssueCommentEvent): Promise<CommentOutcome> {
  const id = String(event.issue.number);
  const base = { issue: id, comment_id: event.comment.id, plan_status: null };
  const login = event.comment.user.login;
  if (event.action !== "created") return { ...base, status: "ignored", command: null, detail: `a comment ${event.action}, not created: not a command` };
  if (event.comment.user.type === "Bot") return { ...base, status: "ignored", command: null, detail: "a bot's comment: not a command" };
  const command = parseCommentCommand(event.comment.body ?? "");
  if (!command) return { ...base, status: "ignored", command: null, detail: "no /dissent command in the comment" };
  const said = commandText(command);
  // On a pull request dissent takes `/dissent review` (and answers a mistyped one); the issue commands are for issues.
  const onPull = event.issue.pull_request !== undefined;
  if (onPull && command.name !== "review" && command.name !== "unknown")
    return { ...base, status: "ignored", command: said, detail: "a pull request's comment: only /dissent review is a pull request's command" };

  const tracker = await d.tracker();
  if (!isGithubTracker(tracker)) throw new UsageError(`dissent github comment needs the GitHub tracker; ${d.config.source} uses ${tracker.kind}`);
  if (tracker.name.toLowerCase() !== event.repository.full_name.toLowerCase())
    throw new UsageError(`the event is from ${event.repository.full_name}, but the config's tracker is ${tracker.name}`);
  const store = await d.store();
  // A pull request's commands are recorded under its review's subject (`pr-7`), beside its reviews.
  const subject = onPull ? `pr-${id}` : id;
  const seen = await store.events({ issueId: subject, types: ["CommentCommand"] });
  if (seen.some((e) => e.type === "CommentCommand" && e.comment_id === event.comment.id))
    return { ...base, status: "duplicate", command: said, detail: `comment ${event.comment.id} was handled already` };
  const record = (outcome: "done" | "refused" | "failed" | "unknown", detail: string) =>
    store.append([{ type: "CommentCommand", issue_id: subject, comment_id: event.comment.id, user: login, command: said, outcome, detail }]);

  const permission = await tracker.permission(login);
  if (!MAY_COMMAND.includes(permission)) {
    const detail = `@${login}: only people with write access to ${tracker.name} can command dissent; \`${said}\` was not run.`;
    await tracker.reply(id, detail);
    await record("refused", `permission ${permission}`);
    return { ...base, status: "refused", command: said, detail };
  }
  if (command.name === "unknown") {
    // A typo is answered, not failed: the commenter learns the nearest command, and the job stays green.
    const detail = unknownAnswer(login, command);
    await tracker.reply(id, detail);
    await tracker.react(event.comment.id, "confused");
    await record("unknown", detail);
    return { ...base, status: "unknown", command: said, detail };
  }
  await tracker.react(event.comment.id, "eyes"); // seen: the work may take minutes
  let line: string;
  let ok = true;
  try {
    line = onPull ? await reviewCommand(d, Number(id)) : await runCommand(command, { d, tracker, id, login });
  } catch (e) {
    if (Interrupted.isInstance(e) || !DissentError.isInstance(e)) throw e; // a stop, or a bug: never answered as the command's failure
    ok = false;
    line = `failed: ${d.redact(messageOf(e)).split("\n")[0] ?? ""}`;
  }
  const detail = `@${login} \`${said}\`: ${line}`;
  // A pull request has no plan comment: the answer is dissent's reply on it (the review itself is on the pull request).
  let plan_status: CommentOutcome["plan_status"] = null;
  if (onPull) await tracker.reply(id, detail);
  else plan_status = await answer(d, tracker, id, detail);
  await tracker.react(event.comment.id, ok ? "+1" : "confused");
  await record(ok ? "done" : "failed", line);
  return { ...base, status: ok ? "done" : "failed", command: said, detail, plan_status };
}
