import { codeOf, StoreError } from "../../errors.js";
import { damagedRow, MalformedRow } from "../columns.js";

/** One line naming the file and what to do, for what SQLite says about it. */
export function storeError(e: unknown, file: string): StoreError {
  if (MalformedRow.isInstance(e)) return damagedRow(e, file);
  const code = codeOf(e) ?? "";
  const message = (e as Error).message ?? String(e);
  if (code === "SQLITE_NOTADB" || code === "SQLITE_CORRUPT" || /not a database|malformed/i.test(message)) {
    return new StoreError(`the store ${file} is damaged (${message}): move it aside to start afresh, or restore it from a backup`);
  }
  if (code === "SQLITE_READONLY" || code === "SQLITE_READONLY_DIRECTORY" || /readonly|read-only/i.test(message)) {
    return new StoreError(`the store ${file} is read-only: this command writes to it; give the user write access to the file and its folder (DISSENT_HOME)`);
  }
  if (code === "SQLITE_CANTOPEN" || code === "EACCES" || code === "EPERM") {
    return new StoreError(`cannot open the store ${file} (${code}): check that DISSENT_HOME (or home:) is a folder this user can write`);
  }
  if (code === "SQLITE_BUSY") return new StoreError(`the store ${file} stayed locked by another dissent for too long; try again`);
  if (code === "SQLITE_FULL" || code === "ENOSPC") return new StoreError(`the disk holding the store ${file} is full`);
  return new StoreError(`the store ${file} failed: ${message}`);
}

/** An error SQLite or the file system raised (not one of ours, not a bug of ours). */
export const isSqliteError = (e: unknown) => typeof e === "object" && e !== null && /^SQLITE_|^E[A-Z]+$/.test(codeOf(e) ?? "");
