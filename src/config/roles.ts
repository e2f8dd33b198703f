import type * as Levenshtein from "fastest-levenshtein";
import { IMPLEMENT_ROLES } from "../implement/roles.js";
import { PIPELINE_ROLES } from "../pipeline/stages.js";
import { lazyRequire } from "../lazy-require.js";
import { PRODUCER_ROLES, roleChain } from "../models/role-chain.js";

/** The edit distance, loaded on the first misspelt route (it allocates a 256 KiB table at load). */
const levenshtein: () => typeof Levenshtein = lazyRequire("fastest-levenshtein");

/**
 * Roles are data (docs/configuration.md "Roles"): the set a route may name is built from the tables
 * that call them, so a misspelt route (`challanger:`) is an error naming the nearest role instead of
 * a route that silently never applies. A feature that adds roles adds its table to ROLE_TABLES.
 */

/** The audit gate's roles (ADR-009): the executor drafts and revises, the challenger audits. */
export const GATE_ROLES = ["executor", "challenger"] as const;

/** `dissent eval`'s own role: the judge of checklist coverage. */
export const EVAL_ROLES = ["eval.judge"] as const;

/** Every table of roles: the gate's, the pipeline's stage table (producers, critics, gate, reviewer), eval's, the implementation review's. */
export const ROLE_TABLES: readonly (readonly string[])[] = [GATE_ROLES, PIPELINE_ROLES, EVAL_ROLES, IMPLEMENT_ROLES];

/** Every role dissent calls a model for. */
export const KNOWN_ROLES: ReadonlySet<string> = new Set(ROLE_TABLES.flat());

/**
 * What a route may be named: a name some role looks up — a role, a dotted prefix of a critic's name
 * (`plan` covers `plan.builder`; a prefix never routes a producer), or `default`.
 */
export const ROUTE_NAMES: ReadonlySet<string> = new Set([...KNOWN_ROLES].flatMap((role) => roleChain(role)));

/** The route name nearest to a misspelt one (by edit distance, case ignored). */
export function nearestRouteName(name: string): string {
  const names = [...ROUTE_NAMES].sort();
  const lower = levenshtein().closest(
    name.toLowerCase(),
    names.map((n) => n.toLowerCase()),
  );
  return names.find((n) => n.toLowerCase() === lower) ?? names[0] ?? "default";
}

/** The first route name in `routes` that names no role, with the nearest one that does. */
export function unknownRoute(routes: Record<string, unknown> | undefined): { name: string; nearest: string } | undefined {
  for (const name of Object.keys(routes ?? {})) if (!ROUTE_NAMES.has(name)) return { name, nearest: nearestRouteName(name) };
  return undefined;
}

/** The message for a route that names no role; a prefix of producers only says why it routes nothing. */
export function unknownRouteMessage(u: { name: string; nearest: string }): string {
  const producers = [...PRODUCER_ROLES].filter((p) => p.startsWith(`${u.name}.`));
  if (producers.length)
    return `routes.${u.name} routes no role: a prefix routes critics only, and ${producers.join(", ")} ${producers.length === 1 ? "is a producer" : "are producers"} — route ${producers.length === 1 ? "it" : "them"} by ${producers.length === 1 ? "its" : "their"} full name, or did you mean '${u.nearest}'? (the roles are listed in docs/configuration.md)`;
  return `routes.${u.name} names no role: did you mean '${u.nearest}'? (the roles are listed in docs/configuration.md)`;
}
