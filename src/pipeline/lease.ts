import { hostname } from "node:os";
import { randomUUID } from "node:crypto";
import { codeOf, LeaseHeld, RunError } from "../errors.js";
import type { LeaseHolder, Store } from "../store/port.js";

/** A lease not renewed for this long has expired and may be taken over (docs/issue.md). */
export const LEASE_TTL_MS = 60_000;
/** How often a holder renews its lease. */
export const LEASE_RENEW_MS = 10_000;

/** Is there a process with this pid on this machine? (EPERM: there is, owned by someone else.) */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return codeOf(e) === "EPERM";
  }
}

/** This process as a lease holder (a new id per run, so two runs of one process never share a lease). */
export function processHolder(): LeaseHolder {
  return { id: randomUUID(), host: hostname(), pid: process.pid };
}

/** A held lease: renewed in the background until released; `lost` aborts when another process took it over. */
export interface HeldLease {
  /** True when the lease had expired under another holder and was taken over. */
  tookOver: boolean;
  /** Aborted (with a RunError) if a renewal finds the lease is no longer ours. */
  lost: AbortSignal;
  release(): Promise<void>;
}

/**
 * One planner per issue (docs/issue.md): takes the issue's lease or throws LeaseHeld naming the
 * holder (host, pid, since when). Two processes can never both spend an issue's budget.
 */
export async function holdLease(
  store: Store,
  issueId: string,
  holder: LeaseHolder,
  opts: { ttlMs?: number; renewMs?: number; onRenewError?: (e: unknown) => void } = {},
): Promise<HeldLease> {
  const ttl = opts.ttlMs ?? LEASE_TTL_MS;
  let got = await store.lease.acquire(issueId, holder, ttl);
  // A holder on this machine whose process is gone (killed with -9) holds nothing: take over at once.
  if (!got.ok && got.holder.host === holder.host && !alive(got.holder.pid)) got = await store.lease.acquire(issueId, holder, ttl, got.holder.id);
  if (!got.ok) {
    const h = got.holder;
    throw new LeaseHeld(
      `issue ${issueId} is being planned by another dissent (host ${h.host}, pid ${h.pid}, since ${h.since}); its lease expires if not renewed for ${Math.round(ttl / 1000)} s`,
      {
        host: h.host,
        pid: h.pid,
        since: h.since,
      },
    );
  }
  const lost = new AbortController();
  let released = false;
  const timer = setInterval(() => {
    store.lease.renew(issueId, holder.id).then(
      (ok) => {
        if (!ok && !released)
          lost.abort(new RunError(`the lease on issue ${issueId} was taken over by another dissent after this one failed to renew it; stopping`));
      },
      (e: unknown) => opts.onRenewError?.(e),
    );
  }, opts.renewMs ?? LEASE_RENEW_MS);
  timer.unref();
  return {
    tookOver: got.tookOver,
    lost: lost.signal,
    async release() {
      if (released) return;
      released = true;
      clearInterval(timer);
      await store.lease.release(issueId, holder.id);
    },
  };
}
