import { LABELS } from "../../contracts/labels.js";
import type { GithubSession } from "./client.js";
import { statusOf } from "./errors.js";

/** Repositories whose dissent-* labels this process has made sure of: they are created once per process. */
const ensured = new Map<string, Promise<void>>();

/** Creates the dissent-* labels the repository lacks, with the label table's colours and descriptions. */
export function ensureLabels(s: GithubSession): Promise<void> {
  let done = ensured.get(s.key);
  if (!done) {
    done = createMissing(s);
    ensured.set(s.key, done);
    done.catch(() => ensured.delete(s.key)); // forget a failed attempt so a later call tries again; the caller gets the error
  }
  return done;
}

async function createMissing(s: GithubSession): Promise<void> {
  const { owner, repo } = s;
  const existing = await s.pages("listing the repository's labels", (gh, request) => gh.rest.issues.listLabelsForRepo({ owner, repo, per_page: 100, request }));
  const have = new Set(existing.map((l) => l.name.toLowerCase())); // GitHub label names are case-insensitive
  for (const [name, { color, description }] of Object.entries(LABELS)) {
    if (have.has(name)) continue;
    await s.step(`creating the label ${name}`, async (gh) => {
      try {
        await gh.rest.issues.createLabel({ owner, repo, name, color, description });
      } catch (e) {
        if (statusOf(e) !== 422) throw e; // 422 already_exists: created meanwhile, which is what we wanted
      }
    });
  }
}

const names = (labels: readonly { name: string }[]) => labels.map((l) => l.name);

/**
 * Adds, then removes (an interrupted move leaves two labels, never none); idempotent. Returns the
 * labels afterwards, as GitHub's answers give them, else from `read`.
 */
export async function moveLabels(
  s: GithubSession,
  n: number,
  change: { add: readonly string[]; remove: readonly string[] },
  read: () => Promise<string[]>,
): Promise<string[]> {
  const { owner, repo } = s;
  let after: string[] | undefined;
  if (change.add.length) {
    await ensureLabels(s);
    const { data } = await s.step(`adding ${change.add.join(", ")} to issue #${n}`, (gh) =>
      gh.rest.issues.addLabels({ owner, repo, issue_number: n, labels: [...change.add] }),
    );
    after = names(data);
  }
  for (const name of change.remove) {
    const remaining = await s.step(`removing ${name} from issue #${n}`, async (gh) => {
      try {
        return names((await gh.rest.issues.removeLabel({ owner, repo, issue_number: n, name })).data);
      } catch (e) {
        if (statusOf(e) === 404) return undefined; // already gone, or no such issue: `read` tells which
        throw e;
      }
    });
    after = remaining ?? (after?.includes(name) ? undefined : after);
  }
  return after ?? (await read());
}
