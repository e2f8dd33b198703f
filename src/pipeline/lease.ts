import { hostname } from "node:os";
import { randomUUID } from "node:crypto";
import { codeOf, LeaseHeld, RunError } from "../errors.js";
import { pidSpace } from "../pid-space.js";
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

/**
 * A new lease-holder id (one per run, so two runs of one process never share a lease), ending with
 * the pid space the holder lives in: only a taker in the same space may judge its pid.
 */
export function holderId(): string {
  return `${randomUUID()}@${pidSpace()}`;
}

/** The pid space a holder id names ("" for one that names none: an id given by a library caller, or an older dissent's). */
const spaceOf = (id: string) => (id.includes("@") ? id.slice(id.indexOf("@") + 1) : "");

/** This process as a lease holder. */
export function processHolder(): LeaseHolder {
  return { id: holderId(), host: hostname(), pid: process.pid };
}

/**
 * Is the lease's holder known to be dead? Only when it lives in this very pid space (same host name,
 * same boot, same PID namespace) and its pid is gone. Anywhere else — another machine, another
 * container on the same host name — its pid means nothing here: the lease's heartbeat decides (a
 * holder renews every LEASE_RENEW_MS; one not renewed for the TTL has expired, and the store lets it go).
 */
function knownDead(held: { id: string; host: string; pid: number }, me: LeaseHolder): boolean {
  const space = spaceOf(held.id);
  return held.host === me.host && space !== "" && space === spaceOf(me.id) && !alive(held.pid);
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
  /** `busy`: what the refusal says the holder is doing (default `issue <ID> is being planned`). */
  opts: { ttlMs?: number; renewMs?: number; onRenewError?: (e: unknown) => void; busy?: string } = {},
): Promise<HeldLease> {
  const ttl = opts.ttlMs ?? LEASE_TTL_MS;
  let got = await store.lease.acquire(issueId, holder, ttl);
  // A holder in this pid space whose process is gone (killed with -9) holds nothing: take over at once.
  if (!got.ok && knownDead(got.holder, holder)) got = await store.lease.acquire(issueId, holder, ttl, got.holder.id);
  if (!got.ok) {
    const h = got.holder;
    throw new LeaseHeld(
      `${opts.busy ?? `issue ${issueId} is being planned`} by another dissent (host ${h.host}, pid ${h.pid}, since ${h.since}); its lease expires if not renewed for ${Math.round(ttl / 1000)} s`,
      { holder: { host: h.host, pid: h.pid, since: h.since } },
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
