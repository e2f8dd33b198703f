import type { RoundDetail, RoundEntry, ServedEvent, StageEntry, StageRoundsPage } from "../../read-models/types.js";
import { useData } from "../live.js";
import { CallsTable, UsageLine } from "./calls.js";
import { DraftDiff, Quoted } from "./said.js";

const OUTCOME: Record<RoundDetail["second_opinions"][number]["outcome"], string> = {
  confirmed: "confirmed: it blocks",
  refuted: "refuted: kept as MEDIUM",
  unquoted: "confirmed without quoting the draft: kept as MEDIUM",
  failed: "failed: kept as MEDIUM",
  skipped: "not asked: kept as MEDIUM",
};

/** What each critic of a round said, what the verifier answered, and what blocked. */
function Said({ r }: { r: RoundDetail }) {
  return (
    <div class="said-round">
      <ul class="findings">
        {r.critics.map((c) => (
          <li key={c.role} data-critic={c.role}>
            <b>{c.role}</b>{" "}
            {c.failed !== undefined ? (
              <span class="error">failed and said nothing: {c.failed}</span>
            ) : c.findings.length === 0 ? (
              <span class="muted">no finding</span>
            ) : (
              <ul>
                {c.findings.map((f, i) => (
                  <li key={i} data-finding={f.severity}>
                    <span class={`badge ${f.severity}`}>{f.severity}</span> <span class="muted">{f.category}</span> {f.concern}
                    {f.evidence ? (
                      <q
                        class={f.grounded ? "" : "ungrounded"}
                        title={f.grounded ? "quoted from the draft" : "not found in the draft: counted as MEDIUM at most"}
                      >
                        {f.evidence}
                      </q>
                    ) : null}
                    {f.evidence && !f.grounded ? <span class="muted"> (not in the draft)</span> : null}
                    {f.known_gap ? <span class="muted"> · known gap {f.known_gap}</span> : null}
                  </li>
                ))}
              </ul>
            )}
          </li>
        ))}
        {r.second_opinions.map((o) => (
          <li key={o.concern_id} data-verdict={o.outcome}>
            <b>{o.by ?? "verifier"}</b> on <span class="mono">{o.concern_id}</span> (a lone HIGH of {o.raised_by}): <b>{OUTCOME[o.outcome]}</b>
            {o.reason ? <> — {o.reason}</> : null}
            {o.why ? <span class="muted"> ({o.why})</span> : null}
            {o.evidence ? <q>{o.evidence}</q> : null}
          </li>
        ))}
      </ul>
      {r.blocking.length ? (
        <p data-blocking>
          <b>blocked:</b>{" "}
          {r.blocking.map((b, i) => (
            <span key={b.id}>
              {i ? "; " : ""}
              <span class="mono">{b.id}</span> <span class={`badge ${b.severity}`}>{b.severity}</span> {b.concern}
            </span>
          ))}{" "}
          <span class="muted">— the producer was asked for another draft</span>
        </p>
      ) : (
        <p class="muted">nothing blocked this draft</p>
      )}
    </div>
  );
}

/** A round's draft: the first in full with what the critics quoted marked; the next ones as what changed since the round before. */
function Draft({ r, before }: { r: RoundDetail; before: RoundDetail | undefined }) {
  const quotes = r.critics.flatMap((c) => c.findings.filter((f) => f.grounded).map((f) => f.evidence));
  const whole = (
    <>
      <Quoted text={r.draft} quotes={quotes} name={`draft-${r.round}`} />
      {r.draft_truncated ? <p class="muted">(cut at 256 KiB)</p> : null}
    </>
  );
  if (!before)
    return (
      <details class="draft" open>
        <summary>the draft the critics read</summary>
        {whole}
      </details>
    );
  return (
    <details class="draft" open>
      <summary>what changed since round {before.round}</summary>
      <DraftDiff before={before.draft} after={r.draft} name={`round-${r.round}`} />
      <details>
        <summary class="muted">the whole draft of round {r.round}</summary>
        {whole}
      </details>
    </details>
  );
}

function absentText(page: StageRoundsPage | undefined, s: StageEntry): string | undefined {
  if (!page) return undefined;
  if (page.absent === "running") return "What each critic said, the verifier's verdicts and the drafts are kept when the stage finishes.";
  if (page.absent === "not_recorded")
    return s.status === "interrupted"
      ? "This run of the stage was interrupted before it finished: only its calls are on the record (the stage ran again below)."
      : "This stage kept no record of its rounds (it was planned before dissent kept them): only its calls are shown.";
  return undefined;
}

/** A stage's rounds: for each, what was said (findings, verdicts, what blocked), its draft or what changed in it, and its calls. */
export function StageRounds({ issueId, s }: { issueId: string; s: StageEntry }) {
  const path = `/api/issues/${encodeURIComponent(issueId)}/stages/${s.cycle}/${encodeURIComponent(s.stage)}`;
  const finished = (e: ServedEvent) => e.issue_id === issueId && e.type === "AdversarialStageCompleted" && e.stage === s.stage;
  const { data, error } = useData<StageRoundsPage>(path, finished, 300);
  const detail = new Map((data?.rounds ?? []).map((r) => [r.round, r]));
  const numbers = [...new Set([...s.rounds.map((r) => r.round), ...detail.keys()])].sort((a, b) => a - b);
  const calls = new Map<number, RoundEntry>(s.rounds.map((r) => [r.round, r]));
  const note = absentText(data, s);
  return (
    <div data-stage-rounds={s.stage}>
      {error && !data ? <p class="error">{error}</p> : null}
      {note ? <p class="muted">{note}</p> : null}
      {numbers.length === 0 ? <p class="muted">No call recorded yet.</p> : null}
      {numbers.map((n) => {
        const r = detail.get(n);
        const c = calls.get(n);
        return (
          <div class="round" key={n} data-round={n}>
            <h4>
              round {n}
              {c ? (
                <>
                  {" "}
                  · <UsageLine usage={c.usage} />
                </>
              ) : null}
            </h4>
            {r ? <Said r={r} /> : null}
            {r ? <Draft r={r} before={detail.get(n - 1)} /> : null}
            {c ? <CallsTable calls={c.calls} /> : null}
          </div>
        );
      })}
    </div>
  );
}
