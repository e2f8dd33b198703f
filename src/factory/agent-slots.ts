import { LeaseHeld } from "../errors.js";
import { holdLease, type HeldLease } from "../pipeline/lease.js";
import type { LeaseHolder, Store } from "../store/port.js";

/** The lease key of agent slot `k` (docs/implement.md: `implement.max_concurrency`); never an issue id, which is a number. */
export const agentSlotKey = (k: number) => `agent-slot/${k}`;

/** How long an implement round that found no free slot waits before it is taken again, at most (the poll interval when shorter). */
export const AGENT_SLOT_RETRY_MS = 2_000;

/**
 * Takes one of the factory's `max` agent slots (docs/implement.md), or returns undefined when all
 * are held. A slot is a lease in the store, so the bound holds across every worker sharing it (on
 * PostgreSQL, every machine); a worker that dies frees its slots as it frees its issues' leases.
 */
export async function takeAgentSlot(store: Store, holder: LeaseHolder, max: number, opts: { ttlMs: number; renewMs: number }): Promise<HeldLease | undefined> {
  for (let k = 1; k <= max; k++) {
    try {
      return await holdLease(store, agentSlotKey(k), holder, opts);
    } catch (e) {
      if (!LeaseHeld.isInstance(e)) throw e;
    }
  }
  return undefined;
}
