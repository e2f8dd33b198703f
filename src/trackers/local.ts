import { RunError, UsageError } from "../errors.js";
import type { IssueRow, Store } from "../store/port.js";
import type { TrackedIssue, Tracker } from "./port.js";

const toIssue = (r: IssueRow): TrackedIssue => ({ id: r.id, title: r.title, body: r.body, labels: r.labels });

/** The local tracker: issues and labels in the store (SQLite or PostgreSQL). */
export interface LocalTracker extends Tracker {
  create(input: { title: string; body: string; labels: readonly string[] }): Promise<TrackedIssue>;
}

export function localTracker(store: Store): LocalTracker {
  const get = async (id: string): Promise<TrackedIssue> => {
    const row = await store.issues.get(id.replace(/^#/, ""));
    if (!row) throw new RunError(`no issue ${id} in the local tracker (dissent issue list shows them)`);
    return toIssue(row);
  };
  return {
    kind: "local",
    name: "local",
    get,
    async list() {
      return (await store.issues.list()).map(toIssue);
    },
    async create({ title, body, labels }) {
      if (!title.trim()) throw new UsageError("--title must not be empty");
      return toIssue(await store.issues.create({ title, body, labels }));
    },
    async setLabels(id, change) {
      const issue = await get(id);
      const labels = issue.labels.filter((l) => !change.remove.includes(l));
      for (const l of change.add) if (!labels.includes(l)) labels.push(l);
      await store.issues.setLabels(issue.id, labels);
      return labels;
    },
    // The plan lives in the store already; the local tracker has nowhere else to publish it.
    async publishPlan() {},
    async recordMerged() {},
    async mergedClosures() {
      return []; // local issues are merged by `dissent issue merged`
    },
  };
}
