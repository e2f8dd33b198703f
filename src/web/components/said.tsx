import { useMemo } from "preact/hooks";
import { draftDiff, highlight } from "../text.js";

/**
 * A model's text as it was written (plain text, never rendered as markup), with the quoted excerpts
 * it was reproached with marked: `quotes[n]` marks as `data-quote=n`.
 */
export function Quoted({ text, quotes = [], name }: { text: string; quotes?: readonly string[]; name?: string }) {
  const pieces = useMemo(() => highlight(text, quotes), [text, quotes]);
  return (
    <pre class="said" data-text={name}>
      {pieces.map((p, i) =>
        p.mark === undefined ? (
          p.text
        ) : (
          <mark key={i} data-quote={p.mark} title={`quoted by concern ${p.mark + 1}`}>
            {p.text}
          </mark>
        ),
      )}
    </pre>
  );
}

/** What changed from one draft to the next: removed lines struck, added ones marked, the words that changed inside them bold. */
export function DraftDiff({ before, after, name }: { before: string; after: string; name?: string }) {
  const rows = useMemo(() => draftDiff(before, after), [before, after]);
  if (rows.every((r) => r.kind === "same" || r.kind === "skipped")) return <p class="muted">The draft did not change.</p>;
  return (
    <pre class="said diff" data-diff={name}>
      {rows.map((r, i) =>
        r.kind === "skipped" ? (
          <div key={i} class="skipped">
            … {r.lines} unchanged line{r.lines === 1 ? "" : "s"}
          </div>
        ) : (
          <div key={i} class={r.kind} data-line={r.kind}>
            <span class="sign">{r.kind === "added" ? "+" : r.kind === "removed" ? "−" : " "}</span>
            {r.parts.map((p, k) =>
              p.changed && r.kind === "added" ? <ins key={k}>{p.text}</ins> : p.changed && r.kind === "removed" ? <del key={k}>{p.text}</del> : p.text,
            )}
          </div>
        ),
      )}
    </pre>
  );
}
