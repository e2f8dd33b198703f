import type { IssuePage as Page, ServedEvent } from "../../read-models/types.js";
import { UsageLine } from "../components/calls.js";
import { Lineage } from "../components/lineage.js";
import { Markdown } from "../components/markdown.js";
import { CycleView } from "../components/timeline.js";
import { usd, usageUsd } from "../format.js";
import { useData, useRendered } from "../live.js";
import { href } from "../route.js";

/** The implement phase (docs/implement.md): the branch, the pull request or recorded review, each attempt, the body. */
function Implementation({ impl }: { impl: NonNullable<Page["issue"]["implementation"]> }) {
  const pr = impl.pull_request;
  return (
    <div data-implementation={impl.branch}>
      <h2>Implementation</h2>
      <p>
        branch <code>{impl.branch}</code> · run {impl.run} ·{" "}
        {pr?.where === "github" && pr.url ? (
          <a href={pr.url} rel="noreferrer">
            pull request #{pr.number}
            {pr.draft ? " (draft)" : ""}
          </a>
        ) : pr ? (
          "review recorded in the store"
        ) : (
          "in progress"
        )}
      </p>
      <table>
        <thead>
          <tr>
            <th>attempt</th>
            <th>outcome</th>
            <th>agent</th>
            <th>diff</th>
            <th>tests</th>
          </tr>
        </thead>
        <tbody>
          {impl.attempts.map((a) => (
            <tr key={a.attempt} data-attempt={a.attempt}>
              <td>{a.attempt}</td>
              <td>{a.outcome.replace("_", " ")}</td>
              <td>
                {a.agent_timed_out ? "timed out" : `exit ${a.agent_exit_code ?? "?"}`} · {(a.agent_ms / 1000).toFixed(1)} s
              </td>
              <td>
                +{a.insertions} −{a.deletions} in {a.files}
              </td>
              <td>{a.test_exit_code === null ? "—" : a.test_exit_code === 0 ? "passed" : `failed (${a.test_exit_code})`}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {impl.body ? (
        <details>
          <summary class="muted">the pull request's body</summary>
          <Markdown text={impl.body} name="pull-request" />
        </details>
      ) : null}
    </div>
  );
}

/** The current cycle's usage (its dollars, with estimates when a call had no known price). */
const currentUsage = (p: Page) => p.cycles.find((c) => c.cycle === p.issue.cycle)?.usage ?? p.usage;

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
          {issue.calls} calls · {issue.cost_usd === null ? usageUsd(currentUsage(data)) : usd(issue.cost_usd)}
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
        <CycleView c={c} issueId={issue.id} key={c.cycle} />
      ))}

      {issue.implementation ? <Implementation impl={issue.implementation} /> : null}

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
