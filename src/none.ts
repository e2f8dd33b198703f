/**
 * An empty object to spread in place of an optional field: `...(x ? { x } : NONE)`. A `{}` literal
 * there is a fresh 56-byte allocation each time it is evaluated, and the call door evaluates a dozen
 * per call (ADR-026c, "runAudit, third pass"). Frozen: nothing can be added to it by mistake.
 */
export const NONE: Readonly<Record<never, never>> = Object.freeze({});
