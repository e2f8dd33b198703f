import type { AuditRun, AuditRunPage, RunConcern, RunText, ServedEvent } from "../../read-models/types.js";
import { CallsTable, UsageLine } from "../components/calls.js";
import { DraftDiff, Quoted } from "../components/said.js";
import { count, estimateNote, short, usageUsd, when } from "../format.js";
import { useData, useRendered } from "../live.js";
import { href } from "../route.js";

const isRunCall = (e: ServedEvent) => e.type === "ModelCall" && e.run_id !== undefined;

function verdict(r: Omit<AuditRun, "calls">): { label: string; cls: string } {
  if (!r.audit) return { label: "no audit", cls: "" };
  if (r.challenger_failed) return { label: "challenger failed", cls: "crashed" };
  return r.revised ? { label: "revised", cls: "needs_replan" } : { label: "passed", cls: "ready" };
}

/** The audit runs of `dissent run`, latest first. */
export function Runs() {
  const { data, error } = useData<{ runs: Omit<AuditRun, "calls">[]; last_seq: number }>("/api/runs?limit=200", isRunCall, 500);
  useRendered("runs", data?.last_seq);
  if (error && !data) return <p class="error">{error}</p>;
  if (!data) return <p class="muted">Loading runs…</p>;
  if (!data.runs.length) return <p class="muted">No run yet: dissent run --audit "…" shows here.</p>;
  return (
    <div>
      <h1>Audit runs</h1>
      <table>
        <thead>
          <tr>
            <th>run</th>
            <th>when</th>
            <th>verdict</th>
            <th>roles</th>
            <th>models</th>
            <th class="num">calls</th>
            <th class="num">tokens in / out</th>
            <th class="num">cost</th>
          </tr>
        </thead>
        <tbody>
          {data.runs.map((r) => {
            const v = verdict(r);
            return (
              <tr key={r.run_id} data-run={r.run_id}>
                <td class="mono">
                  <a href={href.runs(r.run_id)}>{short(r.run_id)}</a>
                </td>
                <td>{when(r.started_at)}</td>
                <td>
                  <span class={`badge ${v.cls}`}>{v.label}</span>
                </td>
                <td>{r.roles.join(" → ")}</td>
                <td class="mono">{r.models.join(", ")}</td>
                <td class="num">
                  {r.usage.calls}
                  {r.usage.cached_calls ? ` +${r.usage.cached_calls} cached` : ""}
                </td>
                <td class="num">
                  {r.usage.calls === 0 && r.usage.cached_calls > 0
                    ? `${count(r.usage.reply_cache_input_tokens)} / ${count(r.usage.reply_cache_output_tokens)} cached`
                    : `${count(r.usage.input_tokens)} / ${count(r.usage.output_tokens)}`}
                </td>
                <td class="num" title={estimateNote(r.usage)}>
                  {usageUsd(r.usage)}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

function ConcernItem({ c, n }: { c: RunConcern; n?: number }) {
  const severity = c.severity.toUpperCase();
  return (
    <li data-run-concern={severity}>
      <span class={`badge ${severity}`}>{severity}</span> <span class="muted">{c.category.replace(/_/g, " ")}</span> {c.concern}
      {c.evidence ? <q {...(n !== undefined ? { "data-quote": n } : {})}>{c.evidence}</q> : null}
      {c.suggested_fix ? <div class="muted">suggested: {c.suggested_fix}</div> : null}
    </li>
  );
}

/** What a run said: its prompt, the executor's draft with the challenger's evidence marked, the concerns, and the final answer. */
function RunSaid({ t }: { t: RunText }) {
  const quotes = t.concerns.map((c) => c.evidence);
  return (
    <div class="run-said">
      <h2>Prompt</h2>
      {t.prompt !== null ? <Quoted text={t.prompt} name="prompt" /> : <p class="muted">Not recorded.</p>}
      <h2>Draft</h2>
      {t.draft !== null ? <Quoted text={t.draft} quotes={quotes} name="draft" /> : <p class="muted">Not recorded.</p>}
      <h2>The challenger's concerns</h2>
      {t.challenger_error ? <p class="error">The challenger's reply could not be read: {t.challenger_error}</p> : null}
      {t.verdict === null && !t.challenger_error ? <p class="muted">No audit: the draft went out as it was.</p> : null}
      {t.verdict !== null ? (
        <p data-verdict={t.verdict}>
          verdict <b>{t.verdict === "needs_work" ? "needs work" : "pass"}</b>
          {t.concerns.length ? ` · ${t.concerns.length} grounded concern${t.concerns.length === 1 ? "" : "s"} (their evidence is marked in the draft)` : ""}
        </p>
      ) : null}
      {t.concerns.length ? (
        <ol class="concerns">
          {t.concerns.map((c, i) => (
            <ConcernItem c={c} n={i} key={i} />
          ))}
        </ol>
      ) : null}
      {t.ungrounded.length ? (
        <>
          <p class="muted">Dropped, their evidence not in the draft (ungrounded):</p>
          <ul class="concerns ungrounded">
            {t.ungrounded.map((c, i) => (
              <ConcernItem c={c} key={i} />
            ))}
          </ul>
        </>
      ) : null}
      <h2>Final answer</h2>
      {t.final === null ? <p class="muted">Not recorded.</p> : null}
      {t.final !== null && t.revised && t.draft !== null ? (
        <>
          <p class="muted">The draft, revised once against the grounded concerns:</p>
          <DraftDiff before={t.draft} after={t.final} name="revision" />
          <details>
            <summary class="muted">the final answer as printed</summary>
            <Quoted text={t.final} name="final" />
          </details>
        </>
      ) : null}
      {t.final !== null && !t.revised ? (
        <>
          <p class="muted">The draft, unchanged.</p>
          <Quoted text={t.final} name="final" />
        </>
      ) : null}
    </div>
  );
}

/** One run: what it said (when its text was recorded) and its calls. */
export function RunPage({ id }: { id: string }) {
  const { data, error } = useData<AuditRunPage>(`/api/runs/${encodeURIComponent(id)}`, (e) => e.type === "ModelCall" && e.run_id === id, 300);
  useRendered("run", data?.last_seq);
  if (error && !data) return <p class="error">{error}</p>;
  if (!data) return <p class="muted">Loading run…</p>;
  const v = verdict(data);
  return (
    <div data-run-page={data.run_id}>
      <p>
        <a href={href.runs()}>← runs</a>
      </p>
      <h1 class="mono">{data.run_id}</h1>
      <p>
        <span class={`badge ${v.cls}`}>{v.label}</span> · {when(data.started_at)} · <UsageLine usage={data.usage} />
      </p>
      {data.text ? (
        <RunSaid t={data.text} />
      ) : (
        <div class="panel notice" data-no-text>
          <b>This run's text was not recorded.</b> dissent keeps a run's prompt, draft and answer only when <code>log_content: true</code> is in
          dissent.config.yaml: without it a call records hashes and sizes (a prompt is yours, and may hold what should not be kept). Add the line, and the runs
          after it show their prompt, draft, the challenger's concerns and the final answer here (docs/serve.md, "What was said").
        </div>
      )}
      <h2>Calls</h2>
      <CallsTable calls={data.calls} />
    </div>
  );
}
