import { fileURLToPath } from "node:url";
import { LineCounter, parseDocument } from "yaml";
import type { z } from "zod";
import { ground, groundingText } from "../adversarial/grounding.js";
import { unknownKeyMessage } from "../config/key-suggest.js";
import { UsageError } from "../errors.js";
import { readBounded } from "../files/read.js";
import { sha256 } from "../hash.js";
import { packagePath } from "../package-root.js";
import { GateItem, PipelineItem } from "./schema.js";

/** A set as loaded: its items, where it came from, and a hash of the file (reports name the set they measured). */
export interface LoadedSet<T> {
  /** The file as given, or `bundled:gate.json`. */
  name: string;
  sha256: string;
  items: T[];
  /** Items in the file, before `--limit`. */
  total: number;
}

/** The bundled sets, shipped in the package's `evals/` folder. */
export const BUNDLED = {
  get gate(): string {
    return packagePath("evals", "gate.json");
  },
  get pipeline(): string {
    return packagePath("evals", "pipeline.json");
  },
} as const;

/** A file too large for a set is a mistake (a model file, a log), not a set. */
const MAX_SET_BYTES = 32 * 1024 * 1024;

/** Reads the list of items from JSON or YAML text; errors name the file (and line, for YAML). */
function readList(text: string, name: string): { values: unknown[]; lineOf: (i: number) => number | undefined } {
  const lineCounter = new LineCounter();
  let raw: unknown;
  let lineOf: (i: number) => number | undefined = () => undefined;
  if (/\.json$/i.test(name)) {
    try {
      raw = JSON.parse(text);
    } catch (e) {
      throw new UsageError(`${name}: not valid JSON: ${(e as Error).message.split("\n")[0]}`);
    }
  } else {
    const doc = parseDocument(text, { lineCounter, prettyErrors: false });
    const err = doc.errors[0];
    if (err) {
      const pos = err.linePos?.[0] ?? lineCounter.linePos(err.pos[0]);
      throw new UsageError(`${name}:${pos.line}:${pos.col}: invalid YAML: ${err.message.split("\n")[0]}`);
    }
    try {
      raw = doc.toJS({ maxAliasCount: 100 });
    } catch (e) {
      throw new UsageError(`${name}: invalid YAML: ${(e as Error).message.split("\n")[0]}`);
    }
    lineOf = (i) => {
      const node = doc.getIn([i], true) as { range?: [number, number, number] } | undefined;
      return node?.range ? lineCounter.linePos(node.range[0]).line : undefined;
    };
  }
  if (!Array.isArray(raw)) throw new UsageError(`${name}: a set is a list of items (a JSON array or a YAML sequence)`);
  if (raw.length === 0) throw new UsageError(`${name}: the set has no items`);
  return { values: raw, lineOf };
}

/** `FILE:LINE: item 'id' (#n)`: where an item is, for one-line errors. */
function itemWhere(name: string, value: unknown, i: number, line: number | undefined): string {
  const id = typeof value === "object" && value !== null && typeof (value as { id?: unknown }).id === "string" ? (value as { id: string }).id : undefined;
  return `${name}${line ? `:${line}` : ""}: item ${id ? `'${id}' ` : ""}(#${i + 1})`;
}

/** The first schema issue of an item as a short phrase: `expected.verdict: …`, `unknown key 'x'`. */
function issueText(error: z.ZodError, schema: z.ZodType): string {
  const issue = error.issues[0];
  if (!issue) return "invalid";
  const path = issue.path.map(String).join(".");
  if (issue.code === "unrecognized_keys") return unknownKeyMessage(schema, issue.path, issue.keys[0] ?? "");
  return `${path || "item"}: ${issue.message}`;
}

/** Validates every item of a list against a schema, then the set-wide rules; the first error is one line naming file and item. */
function validate<S extends z.ZodType>(
  text: string,
  name: string,
  schema: S,
  check: (item: z.output<S>) => string | undefined,
): { items: z.output<S>[]; hash: string } {
  const { values, lineOf } = readList(text, name);
  const items: z.output<S>[] = [];
  const seen = new Set<string>();
  for (const [i, value] of values.entries()) {
    const where = () => itemWhere(name, value, i, lineOf(i));
    const parsed = schema.safeParse(value);
    if (!parsed.success) throw new UsageError(`${where()}: ${issueText(parsed.error, schema)}`);
    const item = parsed.data as z.output<S> & { id: string };
    if (seen.has(item.id)) throw new UsageError(`${where()}: duplicate id '${item.id}'`);
    seen.add(item.id);
    const problem = check(item);
    if (problem) throw new UsageError(`${where()}: ${problem}`);
    items.push(item);
  }
  return { items, hash: sha256(text) };
}

const short = (s: string) => JSON.stringify(s.length > 60 ? `${s.slice(0, 57)}...` : s);

/** Set-wide rules of a gate item: the verdict agrees with the defects, and every defect's evidence is in the draft. */
export function checkGateItem(item: GateItem): string | undefined {
  const { verdict, defects } = item.expected;
  if (verdict === "pass" && defects.length > 0) return "expected.verdict is pass but the item lists defects (a clean draft has none)";
  if (verdict === "needs_work" && defects.length === 0) return "expected.verdict is needs_work but the item lists no defects";
  const text = groundingText(item.draft);
  for (const [i, d] of item.expected.defects.entries()) {
    const g = ground(text, d.evidence);
    if (g.grounded) continue;
    if (g.reason === "empty" && (d.category === "missing_verification" || d.anywhere)) continue;
    const why =
      g.reason === "empty"
        ? "is empty (only missing_verification or an anywhere defect may be)"
        : g.reason === "too_short"
          ? "is shorter than 3 words (and not a whole line or code span of 12+ characters)"
          : "is not in the draft";
    return `expected.defects.${i}.evidence ${why}: ${short(d.evidence)}`;
  }
  return undefined;
}

/** Parses an `eval gate` set (JSON or YAML; the format follows the name's extension, YAML otherwise). */
export function parseGateSet(text: string, name: string): LoadedSet<GateItem> {
  const { items, hash } = validate(text, name, GateItem, checkGateItem);
  return { name, sha256: hash, items, total: items.length };
}

/** Parses an `eval pipeline` set (JSON or YAML). */
export function parsePipelineSet(text: string, name: string): LoadedSet<PipelineItem> {
  const { items, hash } = validate(text, name, PipelineItem, () => undefined);
  return { name, sha256: hash, items, total: items.length };
}

function readSet(file: string | URL, name: string): string {
  const path = typeof file === "string" ? file : fileURLToPath(file);
  // A bounded, regular-file read (docs/limits.md): /dev/zero or a FIFO as --set is refused at once.
  const got = readBounded(path, MAX_SET_BYTES);
  if (got.ok) return got.text;
  throw new UsageError(`${name}: ${got.reason}`);
}

/** Keeps the first `limit` items (`--limit N`). */
function limited<T>(set: LoadedSet<T>, limit: number | undefined): LoadedSet<T> {
  return limit === undefined ? set : { ...set, items: set.items.slice(0, limit) };
}

/** Loads a gate set from a file, or the bundled one; `limit` keeps the first N items; `name` is how errors name the file (default: the path). */
export function loadGateSet(file?: string, limit?: number, name: string = file ?? "bundled:gate.json"): LoadedSet<GateItem> {
  return limited(parseGateSet(readSet(file ?? BUNDLED.gate, name), name), limit);
}

/** Loads a pipeline set from a file, or the bundled one; `limit` keeps the first N items; `name` is how errors name the file. */
export function loadPipelineSet(file?: string, limit?: number, name: string = file ?? "bundled:pipeline.json"): LoadedSet<PipelineItem> {
  return limited(parsePipelineSet(readSet(file ?? BUNDLED.pipeline, name), name), limit);
}
