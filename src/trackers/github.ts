import type { TrackerConfig } from "../contracts/config.js";
import { ConfigError, RunError, UsageError } from "../errors.js";
import { LABELS } from "../pipeline/labels.js";
import { githubClient, type GithubClient, type GithubOptions } from "./github/client.js";
import { MERGED_MARKER, PLAN_MARKER, mergedComment, planComment } from "./github/comment.js";
import { githubError, statusOf, type GithubErrorContext } from "./github/errors.js";
import type { TrackedIssue, Tracker } from "./port.js";

export type { GithubOptions } from "./github/client.js";

type GithubConfig = Extract<TrackerConfig, { type: "github" }>;

/** Env knob for the spacing between writes, in ms (default: the throttling plugin's, as GitHub advises). */
export const WRITE_INTERVAL_ENV = "DISSENT_GITHUB_WRITE_INTERVAL_MS";

/** Repos whose dissent-* labels this process has made sure of: created once per process. */
const labelsEnsured = new Map<string, Promise<void>>();

interface IssueData {
  number: number;
  title: string;
  body?: string | null;
  html_url: string;
  labels: (string | { name?: string })[];
  pull_request?: unknown;
}

const toIssue = (d: IssueData): TrackedIssue => ({
  id: String(d.number),
  title: d.title,
  body: d.body ?? "",
  labels: d.labels.map((l) => (typeof l === "string" ? l : (l.name ?? ""))).filter((l) => l !== ""),
  url: d.html_url,
});
const names = (labels: readonly { name: string }[]) => labels.map((l) => l.name);

/** An issue id as GitHub numbers it: "12" or "#12". */
export function issueNumber(id: string): number {
  const m = /^#?([1-9]\d{0,9})$/.exec(id.trim());
  if (!m?.[1]) throw new UsageError(`'${id}' is not a GitHub issue number (give it as 12 or #12)`);
  return Number(m[1]);
}

/**
 * The GitHub tracker (issue #6): issues are the work, `dissent-*` labels the state machine, the
 * plan one comment found again by a hidden marker. The merge is noted in a second comment of its
 * own (also found by a marker, so recording it twice leaves one). Octokit loads on first use.
 */
export function githubTracker(config: GithubConfig, env: Record<string, string | undefined>, source: string, options: GithubOptions = {}): Tracker {
  const tokenEnv = config.token_env;
  const token = env[tokenEnv];
  if (!token) throw new ConfigError(`${source}: tracker github (${config.repo}) needs a token in the environment variable ${tokenEnv}, which is not set`);
  const [owner = "", repo = ""] = config.repo.split("/");
  const baseUrl = (config.base_url ?? "https://api.github.com").replace(/\/+$/, "");
  const ctx: GithubErrorContext = { repo: config.repo, tokenEnv, baseUrl, customBaseUrl: config.base_url !== undefined, token };
  const interval = env[WRITE_INTERVAL_ENV];
  if (interval !== undefined && !/^\d+$/.test(interval)) throw new ConfigError(`${WRITE_INTERVAL_ENV} must be a number of milliseconds, not '${interval}'`);
  const opts: GithubOptions = { ...(interval !== undefined ? { writeIntervalMs: Number(interval) } : {}), ...options };

  let client: Promise<GithubClient> | undefined;
  const api = () => (client ??= githubClient(baseUrl, token, opts));
  /** Runs one GitHub step; any failure becomes one line naming the repo (errors.ts). */
  const step = async <T>(action: string, fn: (gh: GithubClient) => Promise<T>): Promise<T> => {
    try {
      return await fn(await api());
    } catch (e) {
      throw githubError(e, ctx, action);
    }
  };

  const ensureLabels = (): Promise<void> => {
    const key = `${baseUrl} ${config.repo.toLowerCase()}`;
    let done = labelsEnsured.get(key);
    if (!done) {
      done = createMissingLabels();
      labelsEnsured.set(key, done);
      done.catch(() => labelsEnsured.delete(key)); // forget a failed attempt so the next call tries again; the caller gets the error
    }
    return done;
  };
  const createMissingLabels = async () => {
    const existing = await step("listing the repository's labels", (gh) => gh.paginate(gh.rest.issues.listLabelsForRepo, { owner, repo, per_page: 100 }));
    const have = new Set(existing.map((l) => l.name.toLowerCase()));
    for (const [name, { color, description }] of Object.entries(LABELS)) {
      if (have.has(name)) continue;
      await step(`creating the label ${name}`, async (gh) => {
        try {
          await gh.rest.issues.createLabel({ owner, repo, name, color, description });
        } catch (e) {
          if (statusOf(e) !== 422) throw e; // 422 already_exists: created meanwhile, which is what we wanted
        }
      });
    }
  };

  /** dissent's comments, by issue and marker, as last written or read in this process. */
  const comments = new Map<string, { id: number; body: string }>();
  /** Our comment on the issue: remembered, else the first whose body starts with the marker. */
  const findComment = async (n: number, marker: string) => {
    const known = comments.get(`${n} ${marker}`);
    if (known) return known;
    const all = await step(`reading the comments of issue #${n}`, (gh) => gh.paginate(gh.rest.issues.listComments, { owner, repo, issue_number: n, per_page: 100 }));
    const found = all.find((c) => c.body?.startsWith(marker));
    return found ? { id: found.id, body: found.body ?? "" } : undefined;
  };
  /** One comment per marker: updated in place (left alone when unchanged), posted when missing. */
  const upsertComment = async (n: number, marker: string, body: string): Promise<void> => {
    const key = `${n} ${marker}`;
    const found = await findComment(n, marker);
    if (found?.body === body) return;
    if (found) {
      const updated = await step(`updating dissent's comment on issue #${n}`, async (gh) => {
        try {
          await gh.rest.issues.updateComment({ owner, repo, comment_id: found.id, body });
          return true;
        } catch (e) {
          if (statusOf(e) === 404) return false; // deleted since: post it again
          throw e;
        }
      });
      if (updated) {
        comments.set(key, { id: found.id, body });
        return;
      }
    }
    const { data } = await step(`commenting on issue #${n}`, (gh) => gh.rest.issues.createComment({ owner, repo, issue_number: n, body }));
    comments.set(key, { id: data.id, body });
  };

  const getIssue = async (n: number): Promise<TrackedIssue> => {
    const { data } = await step(`reading issue #${n}`, (gh) => gh.rest.issues.get({ owner, repo, issue_number: n }));
    if (data.pull_request) throw new RunError(`#${n} in ${config.repo} is a pull request, not an issue: dissent plans issues`);
    return toIssue(data);
  };

  return {
    kind: "github",
    name: config.repo,
    async get(id) {
      return getIssue(issueNumber(id));
    },
    async list() {
      const all = await step("listing open issues", (gh) => gh.paginate(gh.rest.issues.listForRepo, { owner, repo, state: "open", per_page: 100 }));
      return all.filter((d) => !d.pull_request).map(toIssue);
    },
    async setLabels(id, change) {
      const n = issueNumber(id);
      let after: string[] | undefined;
      if (change.add.length) {
        await ensureLabels();
        const { data } = await step(`adding ${change.add.join(", ")} to issue #${n}`, (gh) =>
          gh.rest.issues.addLabels({ owner, repo, issue_number: n, labels: [...change.add] }),
        );
        after = names(data);
      }
      // Removed only after the new ones are on: an interrupted move leaves two labels, never none.
      for (const name of change.remove) {
        const remaining = await step(`removing ${name} from issue #${n}`, async (gh) => {
          try {
            return names((await gh.rest.issues.removeLabel({ owner, repo, issue_number: n, name })).data);
          } catch (e) {
            if (statusOf(e) === 404) return undefined; // already gone (or no such issue: the read below says which)
            throw e;
          }
        });
        after = remaining ?? (after && !after.includes(name) ? after : undefined);
      }
      return after ?? (await getIssue(n)).labels;
    },
    async publishPlan(id, report) {
      const n = issueNumber(id);
      await upsertComment(n, PLAN_MARKER, planComment(String(n), report));
    },
    async recordMerged(id, pr, gaps) {
      const n = issueNumber(id);
      await upsertComment(n, MERGED_MARKER, mergedComment(String(n), pr, gaps));
    },
  };
}
