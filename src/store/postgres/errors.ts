import { codeOf, messageOf, StoreError } from "../../errors.js";
import { damagedRow, MalformedRow } from "../columns.js";

/** Where a database URL points, for messages: host:port/database, never the password. */
export function describeUrl(url: string): string {
  if (!URL.canParse(url)) return "the database in the configured URL";
  const u = new URL(url);
  return `${u.hostname}:${u.port || "5432"}${u.pathname}`;
}

/** pg's own error when a statement got no answer within `query_timeout` (the server stopped answering). */
export const isReadTimeout = (e: unknown) => e instanceof Error && e.message === "Query read timeout";

const duration = (ms: number) => (ms < 1000 || ms % 1000 !== 0 ? `${ms} ms` : `${ms / 1000} s`);

/** One line naming the database (never the URL's password) and what to do, for what pg says. */
export function storeError(e: unknown, where: string, statementTimeoutMs?: number): StoreError {
  if (MalformedRow.isInstance(e)) return damagedRow(e, `at ${where}`);
  const code = codeOf(e) ?? "";
  const message = messageOf(e);
  const bound = statementTimeoutMs === undefined ? "store.statement_timeout_ms" : `${duration(statementTimeoutMs)}, store.statement_timeout_ms`;
  if (code === "57014" && /statement timeout/i.test(message))
    return new StoreError(
      `PostgreSQL at ${where} did not finish a statement of the store within its bound (${bound}): it was cancelled; check the database for a lock held or a load (pg_stat_activity), or raise store.statement_timeout_ms`,
    );
  if (isReadTimeout(e))
    return new StoreError(
      `PostgreSQL at ${where} stopped answering: a statement of the store got no answer within its bound (${bound}, and 5 s more); check that the server is running and reachable`,
    );
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
  /timeout exceeded when trying to connect|Connection terminated|connection timeout|not queryable|terminating connection|^Query read timeout$/i.test(e.message);
