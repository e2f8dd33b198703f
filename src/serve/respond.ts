import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { redactDeep } from "../redact.js";

/** Writes JSON answers: every string passes the redactor first (docs/serve.md: secrets are never served). */
export interface Respond {
  (c: Context, value: unknown, status?: ContentfulStatusCode): Response;
  /** The JSON text of a value, redacted. */
  serialize(value: unknown): string;
  /** Sends JSON text made by `serialize`. */
  raw(c: Context, json: string): Response;
}

export function responder(redact: (text: string) => string): Respond {
  const serialize = (value: unknown) => JSON.stringify(redactDeep(value, redact));
  const raw = (c: Context, json: string, status: ContentfulStatusCode = 200) => c.body(json, status, { "Content-Type": "application/json; charset=utf-8" });
  return Object.assign((c: Context, value: unknown, status: ContentfulStatusCode = 200) => raw(c, serialize(value), status), {
    serialize,
    raw: (c: Context, json: string) => raw(c, json),
  });
}

/** A query parameter read as a whole number within bounds; undefined when absent, an error message when bad. */
export function intParam(value: string | undefined, name: string, min: number, max: number): number | undefined | { error: string } {
  if (value === undefined || value === "") return undefined;
  if (!/^\d{1,15}$/.test(value)) return { error: `${name} must be a whole number, not '${value.slice(0, 40)}'` };
  const n = Number(value);
  if (n < min || n > max) return { error: `${name} must be between ${min} and ${max}` };
  return n;
}
