import type { z } from "zod";

const THINK = /<(think|thinking|reasoning)>[\s\S]*?<\/\1>/gi;

/** Removes `<think>…</think>` (and `<thinking>`, `<reasoning>`) blocks a reasoning model may emit. */
export function stripThink(text: string): string {
  if (!text.includes("<")) return text;
  return text.replace(THINK, "");
}

/** Index of the `}` closing the object opened at `start`, honouring strings; -1 if unbalanced. */
function matchBrace(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \ */) i++;
      else if (c === 34 /* " */) inString = false;
      continue;
    }
    if (c === 34) inString = true;
    else if (c === 123 /* { */) depth++;
    else if (c === 125 /* } */) {
      depth--;
      if (depth === 0) return i;
    }
  }
  return -1;
}

function tryParse(candidate: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(candidate) };
  } catch {
    // Models often leave a trailing comma; one cheap repair, nothing cleverer.
    const repaired = candidate.replace(/,\s*([}\]])/g, "$1");
    if (repaired === candidate) return { ok: false };
    try {
      return { ok: true, value: JSON.parse(repaired) };
    } catch {
      return { ok: false };
    }
  }
}

/**
 * Every top-level JSON object in `text`, in order of appearance: fenced, bare or
 * surrounded by prose. An object nested inside another is not listed separately.
 */
export function jsonObjects(text: string): unknown[] {
  const found: unknown[] = [];
  let i = text.indexOf("{");
  while (i !== -1) {
    const end = matchBrace(text, i);
    if (end === -1) {
      // An unbalanced brace in prose (or a truncated object): the real reply may still follow.
      i = text.indexOf("{", i + 1);
      continue;
    }
    const parsed = tryParse(text.slice(i, end + 1));
    if (parsed.ok) {
      found.push(parsed.value);
      i = text.indexOf("{", end + 1);
    } else {
      i = text.indexOf("{", i + 1);
    }
  }
  return found;
}

/** Why a reply could not be used: no JSON at all, or JSON that never matched the schema. */
export type ParseFailure = { ok: false; reason: "unparseable" | "schema"; error: string };

/**
 * Tolerant structured-reply parsing (CONTRACT §2): strip think blocks, find every JSON
 * object, and return the last one the schema accepts.
 */
export function parseStructured<S extends z.ZodType>(
  text: string,
  schema: S,
): { ok: true; value: z.output<S> } | ParseFailure {
  const objects = jsonObjects(stripThink(text));
  if (objects.length === 0) return { ok: false, reason: "unparseable", error: "reply holds no JSON object" };
  let firstIssue = "";
  for (let k = objects.length - 1; k >= 0; k--) {
    const r = schema.safeParse(objects[k]);
    if (r.success) return { ok: true, value: r.data };
    if (!firstIssue) {
      const issue = r.error.issues[0];
      firstIssue = issue ? `${issue.path.join(".") || "(root)"}: ${issue.message}` : "invalid";
    }
  }
  return { ok: false, reason: "schema", error: `reply does not match the schema (${firstIssue})` };
}
