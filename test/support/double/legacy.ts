import type { DataBlock } from "../../../src/prompting/data-block.js";

/**
 * The request format dissent used before CONTRACT r2 (markdown sections, no data blocks), read into
 * the same blocks the double reads today — so `npm run bench` can drive the previous release through
 * the same double and compare the two side by side. Only the section headings that release wrote
 * are recognised (its own weakness: an artifact could forge them).
 */
const TITLES: Record<string, string> = { "Discovery brief": "brief", Shape: "shape", Plan: "plan", "Acceptance criteria": "acceptance_criteria" };
const HEADING =
  /^## (Discovery brief|Shape|Plan|Acceptance criteria)( under review)?$|^## (Known gaps shipped in earlier work|Pending concerns you must address|Pending concerns \(must address\))$/;

/** A JSON array somewhere in a section's text (after its explanatory sentence). */
const arrayIn = (text: string) => {
  const at = text.indexOf("[");
  return at === -1 ? "[]" : text.slice(at).trim();
};

export function legacyBlocks(first: string, retry: string | undefined): DataBlock[] {
  const lines = first.split("\n");
  const blocks: DataBlock[] = [];
  const head = /^# (?:Issue \S+: )?(.*)$/.exec(lines[0] ?? "");
  // Section starts: the known headings; the last "under review" one runs to the next known non-artifact heading.
  const starts: { at: number; kind: string; name?: string }[] = [];
  lines.forEach((l, i) => {
    const m = HEADING.exec(l);
    if (!m) return;
    if (m[1]) starts.push({ at: i, kind: m[2] ? "under_review" : "artifact", name: TITLES[m[1]] ?? "" });
    else if (m[3] === "Known gaps shipped in earlier work") starts.push({ at: i, kind: "known_gaps" });
    else starts.push({ at: i, kind: "pending_concerns" });
  });
  const bodyEnd = starts[0]?.at ?? lines.length;
  if (head) blocks.push({ kind: "issue", text: `# ${head[1] ?? ""}\n\n${lines.slice(1, bodyEnd).join("\n").trim()}` });
  starts.forEach((s, k) => {
    const text = lines
      .slice(s.at + 1, starts[k + 1]?.at ?? lines.length)
      .join("\n")
      .trim();
    if (s.kind === "pending_concerns") blocks.push({ kind: "pending_concerns", text: text === "None." ? "[]" : arrayIn(text) });
    else blocks.push({ kind: s.kind, ...(s.name ? { name: s.name } : {}), text });
  });
  if (retry !== undefined && /council blocked this draft/i.test(retry)) blocks.push({ kind: "blocking_concerns", text: arrayIn(retry) });
  return blocks;
}
