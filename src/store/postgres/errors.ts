import { codeOf, messageOf, StoreError } from "../../errors.js";
import { damagedRow, MalformedRow } from "../columns.js";

/** Where a database URL points, for messages: host:port/database, never the password. */
export function describeUrl(url: string): string {
  if (!URL.canParse(url)) return "the database in the configured URL";
  const u = new URL(url);
  return `${u.hostname}:${u.port || "5432"}${u.pathname}`;
}

/** One line naming the database (never the URL's password) and what to do, for what pg says. */
export function storeError(e: unknown, where: string): StoreError {
  if (MalformedRow.isInstance(e)) return damagedRow(e, `at ${where}`);
  const code = codeOf(e) ?? "";
  const message = messageOf(e);
  if (["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "ETIMEDOUT", "ECONNRESET"].includes(code)) {
    return new StoreError(`cannot reach PostgreSQL at ${where} (${code}): check that it is running and DISSENT_DATABASE_URL (or store.url_env) points at it`);
  }
  if (/timeout exceeded when trying to connect|Connection terminated due to connection timeout/i.test(message)) {
    return new StoreError(`cannot reach PostgreSQL at ${where} (no answer within 10 s): check that it is running and the URL's host and port`);
  }
  if (code === "28P01" || code === "28000") return new StoreError(`PostgreSQL at ${where} refused the credentials in the database URL (${code})`);
  if (code === "3D000") return new StoreError(`PostgreSQL at ${where} has no such database (${code}): create it (createdb) or fix the URL`);
  if (code === "57P01" || code === "57P03") return new StoreError(`PostgreSQL at ${where} is shutting down or starting (${code}); try again`);
  return new StoreError(`the store at ${where} failed: ${message.split("\n")[0]}`);
}

/** An error from pg or the network (not one of ours, not a bug of ours), or a row that does not read. */
export const isDbError = (e: unknown) => (codeOf(e) !== undefined && !StoreError.isInstance(e)) || MalformedRow.isInstance(e);
/** pg's connection errors carry no code. */
export const isConnectError = (e: unknown) =>
  e instanceof Error &&
  /timeout exceeded when trying to connect|Connection terminated|connection timeout|not queryable|terminating connection/i.test(e.message);
