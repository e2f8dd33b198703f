import { z } from "zod";
import { UsageError } from "../errors.js";
import { readBounded } from "../files/read.js";

/** An event payload file is read up to this size (an issue_comment payload is a few KiB; a comment at most 65,536 characters). */
export const MAX_EVENT_BYTES = 1024 * 1024;

/** The fields of an `issue_comment` webhook payload dissent reads (GitHub's documented shape). */
export const IssueCommentEvent = z.object({
  action: z.string(),
  comment: z.object({
    id: z.number().int().positive(),
    body: z.string().nullable(),
    html_url: z.string().optional(),
    user: z.object({ login: z.string(), type: z.string().optional() }),
  }),
  issue: z.object({
    number: z.number().int().positive(),
    html_url: z.string().optional(),
    pull_request: z.unknown().optional(),
  }),
  repository: z.object({ full_name: z.string() }),
});
export type IssueCommentEvent = z.infer<typeof IssueCommentEvent>;

/** The fields of an `issues` webhook payload dissent reads (`closed`: was it a merge?). */
export const IssuesEvent = z.object({
  action: z.string(),
  issue: z.object({
    number: z.number().int().positive(),
    html_url: z.string().optional(),
    labels: z.array(z.object({ name: z.string() })).default([]),
    pull_request: z.unknown().optional(),
  }),
  repository: z.object({ full_name: z.string() }),
});
export type IssuesEvent = z.infer<typeof IssuesEvent>;

/**
 * Reads the event payload the Action is given (`$GITHUB_EVENT_PATH`): a bounded, regular JSON file
 * of an `issue_comment` event; anything else is one clear line (docs/github-action.md).
 */
export function readCommentEvent(path: string): IssueCommentEvent {
  return readEvent(path, IssueCommentEvent, "an issue_comment");
}

/** Reads an `issues` event payload (`$GITHUB_EVENT_PATH`), as readCommentEvent reads a comment's. */
export function readIssuesEvent(path: string): IssuesEvent {
  return readEvent(path, IssuesEvent, "an issues");
}

function readEvent<S extends z.ZodType>(path: string, schema: S, what: string): z.infer<S> {
  const got = readBounded(path, MAX_EVENT_BYTES);
  if (!got.ok) throw new UsageError(`--event ${path}: ${got.reason}`);
  let raw: unknown;
  try {
    raw = JSON.parse(got.text);
  } catch (e) {
    throw new UsageError(`--event ${path} is not JSON: ${(e as Error).message.split("\n")[0]}`);
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    throw new UsageError(
      `--event ${path} is not ${what} event payload (${first ? `${first.path.join(".") || "the payload"}: ${first.message}` : "unexpected shape"})`,
    );
  }
  return parsed.data;
}
