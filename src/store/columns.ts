/**
 * Typed reads of one row as a driver returns it. SQLite and PostgreSQL hand back the same columns in
 * different shapes (a BIGINT or a COUNT is a string from pg; a JSON column is text from SQLite and
 * parsed from pg): the readers take either, and a value that is neither is a `MalformedRow`.
 */
import { StoreError } from "../errors.js";

/**
 * A row that does not hold what its table promises (a hand edit, a damaged file, a foreign writer):
 * each adapter reports it as one StoreError line naming the store (docs/errors.md), never a stack.
 */
export class MalformedRow extends Error {
  override readonly name = "MalformedRow";
  constructor(
    readonly table: string,
    readonly column: string,
    readonly problem: string,
  ) {
    super(`${table}.${column} ${problem}`);
  }
  static isInstance(e: unknown): e is MalformedRow {
    return e instanceof Error && e.name === "MalformedRow" && "table" in e && "column" in e;
  }
}

/** The columns of one row of `table`, each read as the type its schema gives it. */
export interface Columns {
  text(column: string): string;
  textOrNull(column: string): string | null;
  /** An integer column (INTEGER, BIGINT, COUNT(*)). */
  int(column: string): number;
  /** A floating-point column (REAL, DOUBLE PRECISION). */
  real(column: string): number;
  /** A JSON column: its text parsed (SQLite, or a TEXT column), or the value pg already parsed. */
  json(column: string): unknown;
  /** A text column holding one of `values`. */
  oneOf<T extends string>(column: string, values: readonly T[]): T;
}

const describe = (v: unknown) => (v === null ? "null" : v === undefined ? "missing" : typeof v === "string" ? `"${v.slice(0, 40)}"` : typeof v);

/** Reads `raw` (whatever the driver returned) as a row of `table`. */
export function columnsOf(table: string, raw: unknown): Columns {
  if (typeof raw !== "object" || raw === null) throw new MalformedRow(table, "row", `is ${describe(raw)}, not a row`);
  return new RowColumns(table, raw);
}

/** One reader per row, its methods on the prototype: the event log is read thousands of rows at a time. */
class RowColumns implements Columns {
  constructor(
    private readonly table: string,
    private readonly raw: object,
  ) {}
  private get(column: string): unknown {
    return Object.hasOwn(this.raw, column) ? Reflect.get(this.raw, column) : undefined;
  }
  private bad(column: string, expected: string): MalformedRow {
    return new MalformedRow(this.table, column, `is ${describe(this.get(column))}, not ${expected}`);
  }
  private numeric(column: string, integer: boolean): number {
    const v = this.get(column);
    // pg returns BIGINT and COUNT(*) as strings (they may exceed 2^53); every count dissent keeps fits a number.
    const n = typeof v === "number" ? v : typeof v === "bigint" || (typeof v === "string" && v.trim() !== "") ? Number(v) : Number.NaN;
    if (!Number.isFinite(n) || (integer && !Number.isInteger(n))) throw this.bad(column, integer ? "an integer" : "a number");
    return n;
  }
  text(column: string): string {
    const v = this.get(column);
    if (typeof v !== "string") throw this.bad(column, "text");
    return v;
  }
  textOrNull(column: string): string | null {
    return this.get(column) === null ? null : this.text(column);
  }
  int(column: string): number {
    return this.numeric(column, true);
  }
  real(column: string): number {
    return this.numeric(column, false);
  }
  json(column: string): unknown {
    const v = this.get(column);
    if (typeof v !== "string") {
      if (v === undefined) throw this.bad(column, "JSON");
      return v;
    }
    try {
      return JSON.parse(v);
    } catch (e) {
      throw new MalformedRow(this.table, column, `is not JSON (${e instanceof Error ? e.message : String(e)})`);
    }
  }
  oneOf<T extends string>(column: string, values: readonly T[]): T {
    const v = this.text(column);
    const found = values.find((x) => x === v);
    if (found === undefined) throw this.bad(column, `one of ${values.join(", ")}`);
    return found;
  }
}

/** What each adapter reports for a malformed row: one line naming the store and what to do. */
export function damagedRow(e: MalformedRow, where: string): StoreError {
  return new StoreError(`the store ${where} holds a damaged row: ${e.message}; restore it from a backup, or fix or remove that row`);
}
