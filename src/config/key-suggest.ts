import type * as Levenshtein from "fastest-levenshtein";
import type { z } from "zod";
import { lazyRequire } from "../lazy-require.js";

/** The edit distance, loaded on the first misspelt key (it allocates a 256 KiB table at load). */
const levenshtein: () => typeof Levenshtein = lazyRequire("fastest-levenshtein");

/** The definition zod 4 keeps on every schema: its kind and, by kind, what it wraps. */
interface Def {
  type: string;
  shape?: Record<string, z.ZodType>;
  innerType?: z.ZodType;
  valueType?: z.ZodType;
  element?: z.ZodType;
  options?: z.ZodType[];
  in?: z.ZodType;
  out?: z.ZodType;
  getter?: () => z.ZodType;
}
const defOf = (s: z.ZodType) => (s as unknown as { _zod: { def: Def } })._zod.def;

/** The object schemas a value at this place may be: wrappers (optional, default, pipe…) looked through, union options all kept. */
function objectsOf(s: z.ZodType | undefined, depth = 0): z.ZodType[] {
  if (!s || depth > 16) return [];
  const d = defOf(s);
  if (d.type === "object") return [s];
  if (d.type === "union") return (d.options ?? []).flatMap((o) => objectsOf(o, depth + 1));
  if (d.type === "pipe") return [...objectsOf(d.in, depth + 1), ...objectsOf(d.out, depth + 1)];
  if (d.type === "lazy") return objectsOf(d.getter?.(), depth + 1);
  return objectsOf(d.innerType, depth + 1);
}

/** The schema one step into a value: an object's field, a record's value, a list's item. */
function child(s: z.ZodType, key: PropertyKey, depth = 0): z.ZodType | undefined {
  if (depth > 16) return undefined;
  const d = defOf(s);
  switch (d.type) {
    case "object":
      return d.shape?.[String(key)];
    case "record":
      return d.valueType;
    case "array":
      return d.element;
    case "union":
      for (const o of d.options ?? []) {
        const c = child(o, key, depth + 1);
        if (c) return c;
      }
      return undefined;
    case "pipe":
      return (d.in && child(d.in, key, depth + 1)) ?? (d.out && child(d.out, key, depth + 1));
    case "lazy":
      return d.getter ? child(d.getter(), key, depth + 1) : undefined;
    default:
      return d.innerType ? child(d.innerType, key, depth + 1) : undefined;
  }
}

/** The keys an object at `path` of a value of `schema` may have (every option's, for a union). */
export function keysAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  let at: z.ZodType | undefined = schema;
  for (const key of path) {
    if (!at) return [];
    at = child(at, key);
  }
  const keys = new Set<string>();
  for (const o of objectsOf(at)) for (const k of Object.keys(defOf(o).shape ?? {})) keys.add(k);
  return [...keys];
}

/**
 * The known key nearest to an unknown one, when it is near enough to be the one meant: within an
 * edit distance of a third of the key's length (at least 1, at most 3) — `budgets` → `budget`,
 * `max_concurency` → `max_concurrency`; `colour` suggests nothing.
 */
export function nearestKey(unknown: string, known: readonly string[]): string | undefined {
  if (known.length === 0) return undefined;
  const lower = unknown.toLowerCase();
  const lowered = known.map((k) => k.toLowerCase());
  const best = levenshtein().closest(lower, lowered);
  const distance = levenshtein().distance(lower, best);
  if (distance === 0 && known.includes(unknown)) return undefined;
  if (distance > Math.min(3, Math.max(1, Math.floor(unknown.length / 3)))) return undefined;
  return known[lowered.indexOf(best)];
}

/** `unknown key 'budgets'`, with `: did you mean 'budget'?` when one is near. */
export function unknownKeyMessage(schema: z.ZodType, parent: readonly PropertyKey[], key: string): string {
  const full = [...parent, key].map(String).join(".");
  const near = nearestKey(key, keysAt(schema, parent));
  return near ? `unknown key '${full}': did you mean '${[...parent.map(String), near].join(".")}'?` : `unknown key '${full}'`;
}
