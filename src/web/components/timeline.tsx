import { useState } from "preact/hooks";
import type { CycleTimeline, StageEntry } from "../../read-models/types.js";
import { count, duration, estimateNote, usd, usageUsd } from "../format.js";
import { CallsTable, UsageLine } from "./calls.js";
import { CodeContext } from "./code-context.js";
import { StageRounds } from "./rounds.js";

function StageRow({ s, issueId }: { s: StageEntry; issueId: string }) {
  const [open, setOpen] = useState(s.status === "running");
  const run = s.run;
  const rounds = run?.rounds ?? s.rounds.length;
  return (
    <>
      <tr class="stage" data-stage={s.stage} data-status={s.status} onClick={() => setOpen(!open)}>
        <td>
          {open ? "▾" : "▸"} {s.phase}
        </td>
        <td class="mono">{s.stage}</td>
        <td>
          <span class={`badge ${s.status}`}>{s.status}</span>
        </td>
        <td class="num">{rounds}</td>
        <td>{run ? <span class={`badge ${run.outcome}`}>{run.outcome}</span> : s.oscillation_round ? "oscillating" : ""}</td>
        <td class="num">{run?.calls ?? s.usage.calls}</td>
        <td class="num">
          {count(run?.input_tokens ?? s.usage.input_tokens)} / {count(run?.output_tokens ?? s.usage.output_tokens)}
        </td>
        <td class="num" title={estimateNote(s.usage)}>
          {run && run.cost_usd !== null ? usd(run.cost_usd) : usageUsd(s.usage)}
        </td>
        <td class="num">{run ? duration(run.duration_ms) : ""}</td>
        <td class="num">{run ? `${run.concerns_raised} / ${run.concerns_forwarded}` : ""}</td>
      </tr>
      {open ? (
        <tr class="rounds">
          <td colSpan={10}>
            {run && (run.critic_failures || run.ungrounded_findings || run.invalid_findings) ? (
              <p class="muted">
                {run.critic_failures} critic failure(s) · {run.ungrounded_findings} ungrounded · {run.invalid_findings} invalid finding(s)
              </p>
            ) : null}
            <CodeContext blocks={run?.code_context} />
            <StageRounds issueId={issueId} s={s} />
          </td>
        </tr>
      ) : null}
    </>
  );
}

/** One cycle's stages with their rounds, outcome, calls, tokens, cost and duration. */
export function CycleView({ c, issueId }: { c: CycleTimeline; issueId: string }) {
  const [showCalls, setShowCalls] = useState(false);
  return (
    <div class="cycle" data-cycle={c.cycle}>
      <p class="muted">
        cycle {c.cycle}
        {c.route ? ` · ${c.route.replace("_", "-")} (${c.route_reason})` : ""} · <UsageLine usage={c.usage} />
      </p>
      <table class="timeline">
        <thead>
          <tr>
            <th>phase</th>
            <th>stage</th>
            <th>status</th>
            <th class="num">rounds</th>
            <th>outcome</th>
            <th class="num">calls</th>
            <th class="num">tokens in / out</th>
            <th class="num">cost</th>
            <th class="num">duration</th>
            <th class="num">raised / fwd</th>
          </tr>
        </thead>
        <tbody>
          {c.stages.map((s) => (
            <StageRow s={s} issueId={issueId} key={`${s.stage}-${s.started_seq}`} />
          ))}
          {c.stages.length === 0 ? (
            <tr>
              <td colSpan={10} class="muted">
                {c.route === "trivial" ? "Trivial: no adversarial stage (planner → plan reviewer)." : "No stage yet."}
              </td>
            </tr>
          ) : null}
        </tbody>
      </table>
      {c.calls.length ? (
        <p>
          <button type="button" class="link" onClick={() => setShowCalls(!showCalls)}>
            {showCalls ? "hide" : "show"} the {c.calls.length} call(s) outside stages (gate, planner, reviewer)
          </button>
        </p>
      ) : null}
      {showCalls ? <CallsTable calls={c.calls} /> : null}
    </div>
  );
}
