import { z } from "zod";

/**
 * A zod schema built on its first use, not at import: importing "dissent" then keeps only the schemas
 * runAudit parses (docs/library.md "Exported schemas"). It parses, rejects and converts to JSON
 * Schema as the built schema does; `.unwrap()` is the built schema itself, the same instance every
 * time (for `.shape`, `.extend` and embedding in a larger schema).
 */
export function lazySchema<T extends z.ZodType>(build: () => T): z.ZodLazy<T> {
  let built: T | undefined;
  return z.lazy(() => {
    built ??= build();
    return built;
  });
}
