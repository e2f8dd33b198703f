/** The PostgreSQL store (ADR-010), split by sub-port under src/store/postgres/ (ADR-029): its entry points, where importers have always found them. */
export type { Query } from "./postgres/connection.js";
export { describeUrl } from "./postgres/errors.js";
export { openPostgresStore, type PostgresOptions } from "./postgres/open.js";
export { PG_CHANNEL, PG_SCHEMA } from "./postgres/schema.js";
export { isPostgresStore, type PostgresStore } from "./postgres/store.js";
