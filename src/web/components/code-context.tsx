import type { StageContext } from "../../contracts/code-context.js";
import { count } from "../format.js";

const where = (i: { path: string; start_line?: number | undefined; end_line?: number | undefined }) =>
  i.start_line !== undefined ? `${i.path}:${i.start_line}-${i.end_line ?? i.start_line}` : i.path;

/**
 * "Code read" under a stage (docs/serve.md "What was said", docs/issue.md "The code the councils
 * read"): each code block the stage's requests carried, the roles that read it, and every map entry,
 * excerpt and context-file section in it with its rank, the terms it matched and why it was chosen.
 */
export function CodeContext({ blocks }: { blocks: readonly StageContext[] | undefined }) {
  if (!blocks?.length) return null;
  return (
    <details class="code-read" data-code-read>
      <summary>
        Code read: {blocks.length} block{blocks.length === 1 ? "" : "s"}, ~{count(blocks.reduce((n, b) => n + b.tokens, 0))} tokens
      </summary>
      {blocks.map((b, k) => (
        <div class="code-block" key={b.digest} data-code-block={k + 1}>
          <p class="muted">
            block {k + 1} · ~{count(b.tokens)} tokens · read by {b.roles.join(", ")}
          </p>
          <table class="code-items">
            <thead>
              <tr>
                <th class="num">#</th>
                <th>what</th>
                <th>where</th>
                <th class="num">tokens</th>
                <th>why</th>
              </tr>
            </thead>
            <tbody>
              {b.items.map((i) => (
                <tr key={`${i.rank}`}>
                  <td class="num">{i.rank}</td>
                  <td>{i.kind.replace("_", " ")}</td>
                  <td class="mono">{where(i)}</td>
                  <td class="num">{i.tokens}</td>
                  <td>
                    {i.why}
                    {i.terms.length ? <span class="muted"> ({i.terms.slice(0, 6).join(", ")})</span> : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ))}
    </details>
  );
}
