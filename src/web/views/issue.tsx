import type { IssuePage as Page, ServedEvent } from "../../read-models/types.js";
import { UsageLine } from "../components/calls.js";
import { Lineage } from "../components/lineage.js";
import { Markdown } from "../components/markdown.js";
import { CycleView } from "../components/timeline.js";
import { usd } from "../format.js";
import { useData, useRendered } from "../live.js";
import { href } from "../route.js";

/** One issue: its stage timeline per cycle, the plan and acceptance criteria, every concern's lineage. */
export function IssuePage({ id }: { id: string }) {
  const mine = (e: ServedEvent) => e.issue_id === id || (e.type === "ModelCall" && (e.wiki_entries?.length ?? 0) > 0);
  const { data, error } = useData<Page>(`/api/issues/${encodeURIComponent(id)}`, mine, 150);
  useRendered("issue", data?.last_seq);
  if (error && !data) return <p class="error">{error}</p>;
  if (!data) return <p class="muted">Loading issue #{id}…</p>;
  const { issue } = data;
  const cycles = [...data.cycles].reverse(); // the current cycle first
  return (
    <div data-issue-page={issue.id}>
      <p>
        <a href={href.board()}>← board</a>
      </p>
      <h1>
        <span class="muted">#{issue.id}</span> {issue.title}
      </h1>
      <div class="kv">
        <div>
          <span>status</span>
          <span class={`badge ${issue.status}`}>{issue.status.replace("_", " ")}</span>
        </div>
        <div>
          <span>labels</span>
          {issue.labels.join(", ") || "none"}
        </div>
        {issue.route ? (
          <div>
            <span>route</span>
            {issue.route.replace("_", "-")} ({issue.route_reason})
          </div>
        ) : null}
        <div>
          <span>this cycle</span>
          {issue.calls} calls · {usd(issue.cost_usd)}
        </div>
        <div>
          <span>all cycles</span>
          <UsageLine usage={data.usage} />
        </div>
        {issue.url ? (
          <div>
            <a href={issue.url} rel="noreferrer">
              on the tracker
            </a>
          </div>
        ) : null}
      </div>
      {issue.body.trim() ? (
        <details>
          <summary class="muted">issue text</summary>
          <Markdown text={issue.body} name="issue-body" />
        </details>
      ) : null}

      <h2>Stage timeline</h2>
      {cycles.length === 0 ? <p class="muted">Not planned yet (dissent issue plan {issue.id}).</p> : null}
      {cycles.map((c) => (
        <CycleView c={c} key={c.cycle} />
      ))}

      <div class="grid2">
        <div>
          <h2>Plan</h2>
          {issue.plan ? <Markdown text={issue.plan} name="plan" /> : <p class="muted">No plan in this cycle yet.</p>}
        </div>
        <div>
          <h2>Acceptance criteria</h2>
          {issue.acceptance_criteria.length ? (
            <ul class="panel" data-artifact="acceptance_criteria">
              {issue.acceptance_criteria.map((c, i) => (
                <li key={i}>
                  <Markdown text={c} inline />
                </li>
              ))}
            </ul>
          ) : (
            <p class="muted">None yet.</p>
          )}
        </div>
      </div>

      <h2>Concerns and their lineage ({data.lineage.length})</h2>
      <Lineage items={data.lineage} />
    </div>
  );
}
