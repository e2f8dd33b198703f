import type { ServedEvent, WikiEntryView } from "../../read-models/types.js";
import { Markdown } from "../components/markdown.js";
import { useData, useRendered } from "../live.js";
import { href } from "../route.js";

const touchesWiki = (e: ServedEvent) => e.type === "ShippedWithKnownGap" || (e.type === "ModelCall" && (e.wiki_entries?.length ?? 0) > 0);

function GivenTo({ e }: { e: WikiEntryView }) {
  if (!e.given_to.length) return <span class="muted">not given to any issue yet</span>;
  return (
    <span>
      {e.given_to.map((u, i) => (
        <span key={u.issue_id}>
          {i ? ", " : ""}
          <a href={href.issue(u.issue_id)}>#{u.issue_id}</a>
        </span>
      ))}
    </span>
  );
}

/** Known gaps shipped despite dissent, and the issues each was given to. */
export function Wiki() {
  const { data, error } = useData<{ entries: WikiEntryView[] }>("/api/wiki", touchesWiki, 500);
  useRendered("wiki", data ? 0 : undefined);
  if (error && !data) return <p class="error">{error}</p>;
  if (!data) return <p class="muted">Loading the wiki…</p>;
  if (!data.entries.length) return <p class="muted">The wiki is empty: entries appear when an issue merges with unresolved CRITICAL or HIGH concerns.</p>;
  return (
    <div>
      <h1>Wiki</h1>
      <table>
        <thead>
          <tr>
            <th>entry</th>
            <th>severity</th>
            <th>shipped in</th>
            <th>from issues</th>
            <th>given to</th>
          </tr>
        </thead>
        <tbody>
          {data.entries.map((e) => (
            <tr key={e.id} data-entry={e.id}>
              <td>
                <a href={href.wiki(e.id)}>{e.title || e.id}</a>
                {e.stale ? <span class="muted"> (stale)</span> : null}
              </td>
              <td>
                <span class={`badge ${e.severity}`}>{e.severity}</span>
              </td>
              <td>{e.prs.map((p) => `#${p}`).join(", ")}</td>
              <td>
                {e.issues.map((i, n) => (
                  <span key={i}>
                    {n ? ", " : ""}
                    <a href={href.issue(i)}>#{i}</a>
                  </span>
                ))}
              </td>
              <td>
                <GivenTo e={e} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function WikiEntry({ id }: { id: string }) {
  const { data, error } = useData<WikiEntryView>(`/api/wiki/${encodeURIComponent(id)}`, touchesWiki, 500);
  if (error && !data) return <p class="error">{error}</p>;
  if (!data) return <p class="muted">Loading…</p>;
  return (
    <div>
      <p>
        <a href={href.wiki()}>← wiki</a>
      </p>
      <h1>{data.title || data.id}</h1>
      <p>
        <span class={`badge ${data.severity}`}>{data.severity}</span> · {data.category} · confidence {data.confidence} · given to <GivenTo e={data} />
      </p>
      <Markdown text={data.body ?? ""} name="wiki-entry" />
    </div>
  );
}
