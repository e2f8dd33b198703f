/**
 * The pipeline's producers (the stage table's, src/pipeline/stages.ts): each writes an artifact its
 * council reviews. A dotted route prefix routes the critics under it, never a producer
 * (docs/configuration.md "How a role finds its route"): `shape:` routes the shape council, not the
 * shape writer, as `discovery:` and `plan:` route only critics.
 */
export const PRODUCER_ROLES: ReadonlySet<string> = new Set(["discover.brief", "shape.writer", "planner", "spec.ac_generator"]);

/** Role chains already worked out: a process routes a handful of roles, on every call (bounded all the same). */
const chains = new Map<string, readonly string[]>();
const MAX_CHAINS = 256;

/**
 * Where a role looks for its route, most specific first (docs/configuration.md): `plan.builder` →
 * [`plan.builder`, `plan`, `default`]; a producer → itself, then `default` (`shape.writer` →
 * [`shape.writer`, `default`]).
 */
export function roleChain(role: string): readonly string[] {
  const known = chains.get(role);
  if (known) return known;
  const parts = role.split(".");
  const chain: string[] = [];
  for (let n = parts.length; n > 0; n--) if (n === parts.length || !PRODUCER_ROLES.has(role)) chain.push(parts.slice(0, n).join("."));
  if (role !== "default") chain.push("default");
  if (chains.size < MAX_CHAINS) chains.set(role, Object.freeze(chain));
  return chain;
}
