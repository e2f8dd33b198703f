import { useState } from "preact/hooks";
import type { IssueSummary, ServedEvent } from "../../read-models/types.js";
import { count, usd, when } from "../format.js";
import { useData, useRendered } from "../live.js";
import { href } from "../route.js";

const COLUMNS: { state: IssueSummary["state"]; title: string }[] = [
  { state: "dissent-find", title: "find" },
  { state: "dissent-plan", title: "plan" },
  { state: "dissent-ready", title: "ready" },
  { state: "dissent-implementing", title: "implementing" },
  { state: "dissent-review", title: "in review" },
  { state: "dissent-hitl", title: "hitl" },
  { state: "dissent-fixed", title: "fixed" },
];

/** Events that move a card (a ModelCall moves its calls and dollars, less urgently: see the gap). */
const relevant = (e: ServedEvent) => e.type !== "ModelCall" || e.issue_id !== null;

const newestFirst = (a: IssueSummary, b: IssueSummary) =>
  (b.updated_at ?? "").localeCompare(a.updated_at ?? "") || Number(b.id) - Number(a.id) || b.id.localeCompare(a.id);

function Card({ issue }: { issue: IssueSummary }) {
  return (
    <a class="card" href={href.issue(issue.id)} data-issue={issue.id}>
      <div class="title">
        <span class="muted">#{issue.id}</span> {issue.title}
      </div>
      <div class="meta">
        {issue.running || issue.current_stage ? (
          <span class="badge running">
            {issue.running ? "▶ " : "⏸ "}
            {issue.current_stage ?? "planning"}
          </span>
        ) : null}
        {issue.status !== "new" && issue.state !== "dissent-fixed" ? <span class={`badge ${issue.status}`}>{issue.status.replace("_", " ")}</span> : null}
        {issue.pending_concerns ? <span title="pending concerns">{issue.pending_concerns} pending</span> : null}
        {issue.calls ? <span title="network calls of the current cycle">{count(issue.calls)} calls</span> : null}
        {issue.calls ? <span title="dollars of the current cycle's priced calls">{usd(issue.cost_usd)}</span> : null}
        {issue.updated_at ? <span>{when(issue.updated_at)}</span> : null}
      </div>
    </a>
  );
}

/** Cards a column draws before "show all": a column of hundreds is scrolled, not read, and drawing it all costs the first paint. */
const FIRST = 25;

function Column({ title, issues }: { title: string; issues: IssueSummary[] }) {
  const [all, setAll] = useState(false);
  // Running issues first, then the most recently moved.
  const sorted = [...issues].sort((a, b) => Number(b.running) - Number(a.running) || newestFirst(a, b));
  const shown = all ? sorted : sorted.slice(0, FIRST);
  return (
    <section class="column" data-column={title}>
      <h2>
        <span>{title}</span>
        <span class="muted">{issues.length}</span>
      </h2>
      <div class="cards">
        {shown.map((i) => (
          <Card issue={i} key={i.id} />
        ))}
        {shown.length < sorted.length ? (
          <button type="button" class="link more" onClick={() => setAll(true)}>
            show all {sorted.length}
          </button>
        ) : null}
      </div>
    </section>
  );
}

/** The board: every issue in the column of its state label, the running stage on its card. */
export function Board() {
  const { data, error } = useData<{ issues: IssueSummary[]; last_seq: number }>("/api/issues", relevant, 250);
  useRendered("board", data?.last_seq);
  if (error && !data) return <p class="error">{error}</p>;
  if (!data) return <p class="muted">Loading the board…</p>;
  const columns = [...COLUMNS];
  if (data.issues.some((i) => i.state === "none")) columns.push({ state: "none", title: "no state label" });
  return (
    <div>
      {error ? <p class="error">{error}</p> : null}
      <div class="board" style={columns.length > 5 ? { gridTemplateColumns: `repeat(${columns.length}, minmax(180px, 1fr))` } : undefined}>
        {columns.map((c) => (
          <Column key={c.state} title={c.title} issues={data.issues.filter((i) => i.state === c.state)} />
        ))}
      </div>
      {data.issues.length === 0 ? <p class="muted">No issues yet: dissent issue new --title "…" creates one, and it shows here at once.</p> : null}
    </div>
  );
}
