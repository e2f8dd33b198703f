import { RunError, UsageError } from "../errors.js";
import type { Db } from "../store/db.js";
import type { TrackedIssue, Tracker } from "./port.js";

interface Row {
  id: string;
  title: string;
  body: string;
  labels: string;
}

const toIssue = (r: Row): TrackedIssue => ({ id: r.id, title: r.title, body: r.body, labels: JSON.parse(r.labels) as string[] });

/** The local tracker: issues and labels in the SQLite store. */
export interface LocalTracker extends Tracker {
  create(input: { title: string; body: string; labels: readonly string[] }): Promise<TrackedIssue>;
}

export function localTracker(db: Db): LocalTracker {
  const byId = db.prepare<[string], Row>("SELECT id, title, body, labels FROM issues WHERE id = ?");
  const all = db.prepare<[], Row>("SELECT id, title, body, labels FROM issues ORDER BY number");
  const setLabels = db.prepare("UPDATE issues SET labels = ?, updated_at = ? WHERE id = ?");
  const get = (id: string): TrackedIssue => {
    const row = byId.get(id.replace(/^#/, ""));
    if (!row) throw new RunError(`no issue ${id} in the local tracker (dissent issue list shows them)`);
    return toIssue(row);
  };
  return {
    kind: "local",
    name: "local",
    async get(id) {
      return get(id);
    },
    async list() {
      return all.all().map(toIssue);
    },
    async create({ title, body, labels }) {
      if (!title.trim()) throw new UsageError("--title must not be empty");
      const now = new Date().toISOString();
      return db.transaction(() => {
        const { n } = db.prepare<[], { n: number }>("SELECT COALESCE(MAX(number), 0) + 1 AS n FROM issues").get() ?? { n: 1 };
        const id = String(n);
        const unique = [...new Set(labels)];
        db.prepare("INSERT INTO issues (id, number, title, body, labels, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)").run(
          id, n, title, body, JSON.stringify(unique), now, now,
        );
        return { id, title, body, labels: unique };
      })();
    },
    async setLabels(id, change) {
      const issue = get(id);
      const labels = [...issue.labels.filter((l) => !change.remove.includes(l))];
      for (const l of change.add) if (!labels.includes(l)) labels.push(l);
      setLabels.run(JSON.stringify(labels), new Date().toISOString(), issue.id);
      return labels;
    },
    // The plan lives in the store already; the local tracker has nowhere else to publish it.
    async publishPlan() {},
    async recordMerged() {},
  };
}
