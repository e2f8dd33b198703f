import { Fragment } from "preact";
import { resolutionText } from "../../contracts/resolution-text.js";
import { severityText } from "../../contracts/severity-text.js";
import type { ConcernLineage } from "../../read-models/types.js";
import { when } from "../format.js";
import { href } from "../route.js";

const Arrow = () => <span class="arrow">→</span>;

/** A concern from the critic that raised it to the later issues its wiki entry was given to. */
export function Lineage({ items }: { items: readonly ConcernLineage[] }) {
  if (!items.length) return <p class="muted">No concern raised yet.</p>;
  return (
    <div class="lineage">
      {items.map((l) => (
        <div class="concern" key={l.id} data-concern={l.id}>
          <div>
            <span class={`badge ${l.severity}`}>{l.severity}</span>{" "}
            {severityText(l) !== l.severity ? (
              <span class="muted" data-severity-note>
                {severityText(l).slice(l.severity.length + 1)}{" "}
              </span>
            ) : null}
            <span class={`badge ${l.status}`}>{l.status}</span> <span class="mono muted">{l.id}</span> <span class="muted">{l.category}</span>
            {l.human_required ? <span class="badge hitl">human required</span> : null}
          </div>
          <div class="what">{l.concern}</div>
          {l.evidence ? <blockquote>{l.evidence}</blockquote> : null}
          <div class="chain">
            <span class="step" data-step="raised">
              raised by <b>{l.raised_by}</b>
              {l.also_raised_by?.length ? <> (and {l.also_raised_by.join(", ")})</> : null} in {l.stage} <span class="muted">{when(l.raised_at)}</span>
            </span>
            {l.blocked.length ? (
              <>
                <Arrow />
                <span class="step" data-step="blocked">
                  blocked {l.blocked[0]?.stage} round{l.blocked.length === 1 ? "" : "s"} {l.blocked.map((b) => b.round).join(", ")}
                </span>
              </>
            ) : null}
            {l.forwarded.map((f) => (
              <Fragment key={`f${f.seq}`}>
                <Arrow />
                <span class="step" data-step="forwarded">
                  forwarded to <b>{f.to}</b> ({f.reason})
                </span>
              </Fragment>
            ))}
            {l.resolutions.map((r) => (
              <Fragment key={`r${r.seq}`}>
                <Arrow />
                <span class="step" data-step={r.settled ? "settled" : "claimed"} title={r.note}>
                  {r.by === "council" ? (
                    resolutionText({ resolution_kind: r.kind, resolved_by: r.by })
                  ) : (
                    <>
                      {r.settled ? "settled" : "claimed"} by <b>{r.by}</b> ({r.kind})
                    </>
                  )}
                </span>
              </Fragment>
            ))}
            {l.shipped ? (
              <>
                <Arrow />
                <span class="step" data-step="shipped">
                  shipped in <b>PR #{l.shipped.pr}</b>
                </span>
              </>
            ) : null}
            {l.wiki ? (
              <>
                <Arrow />
                <span class="step" data-step="wiki">
                  wiki <a href={href.wiki(l.wiki.id)}>{l.wiki.id}</a>
                  {l.wiki.stale ? " (stale)" : ""}
                </span>
              </>
            ) : null}
            {l.given_to.length ? (
              <>
                <Arrow />
                <span class="step" data-step="given-to">
                  given to{" "}
                  {l.given_to.map((u, i) => (
                    <span key={u.issue_id}>
                      {i ? ", " : ""}
                      <a href={href.issue(u.issue_id)}>#{u.issue_id}</a>
                    </span>
                  ))}
                </span>
              </>
            ) : null}
          </div>
        </div>
      ))}
    </div>
  );
}
