/** The embedded SQLite store (ADR-010), split by sub-port under src/store/sqlite/ (ADR-029): its entry points, where importers have always found them. */
export { memoryStore, openSqliteStore, type SqliteOptions, storeFile } from "./sqlite/open.js";
