import { z } from "zod";

const enumKey = (s: string) => s.toLowerCase().replace(/[\s_-]+/g, "");

/**
 * An enum matched leniently (docs/configuration.md): case, spaces, hyphens and underscores are
 * ignored, so "Needs Work" is `needs_work` and "high" is `HIGH`. The JSON Schema it yields
 * lists the canonical values.
 */
export function lenientEnum<const T extends readonly [string, ...string[]]>(values: T) {
  const canonical = new Map<string, string>(values.map((v) => [enumKey(v), v]));
  return z.preprocess((v) => (typeof v === "string" ? (canonical.get(enumKey(v.trim())) ?? v) : v), z.enum(values));
}

/** An optional string a model may also write as null (or leave out). */
export const optionalText = z
  .string()
  .nullish()
  .transform((v) => v ?? undefined)
  .optional();

/** What reading one structured reply gave: the value, and how many list items were dropped as invalid. */
export type Read<T> = { ok: true; value: T; invalid: number; dropped: unknown[] } | { ok: false; error: string };

/** The first zod issue as one short line. */
export function issueLine(error: z.ZodError): string {
  const issue = error.issues[0];
  return issue ? `${issue.path.join(".") || "(root)"}: ${issue.message}` : "invalid";
}

/**
 * Reads a list leniently (docs/configuration.md): one invalid item is dropped and counted, never the
 * whole reply. A value that is not a list at all is a wrong top-level shape.
 */
export function readList<S extends z.ZodType>(value: unknown, item: S): { items: z.output<S>[]; invalid: number; dropped: unknown[] } | undefined {
  if (value === undefined || value === null) return { items: [], invalid: 0, dropped: [] };
  if (!Array.isArray(value)) return undefined;
  const items: z.output<S>[] = [];
  const dropped: unknown[] = [];
  for (const v of value) {
    const r = item.safeParse(v);
    if (r.success) items.push(r.data);
    else dropped.push(v);
  }
  return { items, invalid: dropped.length, dropped };
}

/** Is `v` a plain JSON object (not an array, not null)? */
export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
