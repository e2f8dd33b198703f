import type { AuditRun, ServedEvent } from "../../read-models/types.js";
import { CallsTable, UsageLine } from "../components/calls.js";
import { count, short, usageUsd, when } from "../format.js";
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
                  {count(r.usage.input_tokens)} / {count(r.usage.output_tokens)}
                </td>
                <td class="num">{usageUsd(r.usage)}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

/** One run and its calls. */
export function RunPage({ id }: { id: string }) {
  const { data, error } = useData<AuditRun>(`/api/runs/${encodeURIComponent(id)}`, (e) => e.type === "ModelCall" && e.run_id === id, 300);
  if (error && !data) return <p class="error">{error}</p>;
  if (!data) return <p class="muted">Loading run…</p>;
  const v = verdict(data);
  return (
    <div>
      <p>
        <a href={href.runs()}>← runs</a>
      </p>
      <h1 class="mono">{data.run_id}</h1>
      <p>
        <span class={`badge ${v.cls}`}>{v.label}</span> · {when(data.started_at)} · <UsageLine usage={data.usage} />
      </p>
      <CallsTable calls={data.calls} />
    </div>
  );
}
