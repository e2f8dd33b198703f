import type { Store } from "../store/port.js";
import type { Job, WorkQueue } from "./queue.js";
import { roundKey, type Round } from "./rounds.js";

/**
 * The in-process queue of a factory on the embedded store (one machine): rounds in memory, due
 * times for rounds queued again, and the set running now. Lost with the process, which is fine:
 * the store holds the state, and the next poll finds every issue still to plan.
 */
export function localQueue(store: Store, now: () => number = Date.now): WorkQueue {
  const queued = new Map<string, Round & { due: number }>();
  const running = new Set<string>();
  return {
    kind: "in-process",
    async enqueue(rounds) {
      const added: Round[] = [];
      for (const r of rounds) {
        const key = roundKey(r);
        if (queued.has(key) || running.has(key)) continue;
        queued.set(key, { ...r, due: now() });
        added.push(r);
      }
      return added;
    },
    async take() {
      const t = now();
      // Oldest due first; Map iteration is insertion order.
      const next = [...queued.entries()].filter(([, r]) => r.due <= t).sort((a, b) => a[1].due - b[1].due)[0];
      if (!next) return undefined;
      const [key, round] = next;
      queued.delete(key);
      running.add(key);
      let open = true;
      const close = () => {
        open = false;
        running.delete(key);
      };
      const job: Job = {
        issueId: round.issueId,
        cycle: round.cycle,
        ...(round.kind ? { kind: round.kind } : {}),
        async finish(record, again) {
          if (!open) return;
          try {
            if (record) await store.transaction(record);
          } finally {
            close();
          }
          if (again && !queued.has(key)) queued.set(key, { ...round, due: again.getTime() });
        },
        async abandon() {
          close();
        },
      };
      return job;
    },
    nextDueInMs() {
      let soonest: number | undefined;
      for (const r of queued.values()) soonest = soonest === undefined ? r.due : Math.min(soonest, r.due);
      return soonest === undefined ? undefined : Math.max(0, soonest - now());
    },
    async close() {
      queued.clear();
    },
  };
}
