/**
 * Issue 32: a lease holder is judged alive by the lease's heartbeat (its renewal time), and its pid
 * only from the pid space it lives in. Two dissents on one host name in different PID namespaces (two
 * containers sharing a volume or a database) see each other's pids as nothing: the live holder keeps
 * its lease until it stops renewing it. Within one pid space a holder whose process is gone (kill -9)
 * is taken over at once, as before.
 */
import { existsSync } from "node:fs";
import { hostname } from "node:os";
import { afterEach, describe, expect, it } from "vitest";
import { LeaseHeld } from "../../src/errors.js";
import { holderId, holdLease, LEASE_TTL_MS } from "../../src/pipeline/lease.js";
import type { LeaseHolder } from "../../src/store/port.js";
import { BACKENDS, type Backend } from "../support/store-backends.js";

/** A pid no process has here (above every pid this machine has handed out in the test's life). */
const GONE = 4_194_297;

describe.each(BACKENDS)("holdLease on %s", (_name, make) => {
  let b: Backend;
  afterEach(async () => {
    await b.cleanup();
  });

  it("a holder on this host name in another PID namespace, whose pid means nothing here, keeps its lease while it renews it; it is taken over once its heartbeat stops", async () => {
    b = make();
    const store = await b.open();
    expect(existsSync(`/proc/${GONE}`)).toBe(false);
    // The other container: same host name, its own pid space (its holder id names it), a pid this one does not have.
    const other: LeaseHolder = { id: `${crypto.randomUUID()}@another-boot/pid:[4026532999]`, host: hostname(), pid: GONE };
    expect(await store.lease.acquire("7", other, LEASE_TTL_MS)).toMatchObject({ ok: true });
    const me = { id: holderId(), host: hostname(), pid: process.pid };
    await expect(holdLease(store, "7", me)).rejects.toSatisfy((e) => LeaseHeld.isInstance(e));
    // It stops renewing (its container died): after the TTL its lease is taken over.
    await b.ageLeases(store, LEASE_TTL_MS + 1_000);
    const held = await holdLease(store, "7", me);
    expect(held.tookOver).toBe(true);
    await held.release();
  });

  it("a holder in this very pid space whose process is gone (kill -9) is taken over at once, without waiting for the TTL", async () => {
    b = make();
    const store = await b.open();
    const dead: LeaseHolder = { id: holderId(), host: hostname(), pid: GONE };
    expect(await store.lease.acquire("8", dead, LEASE_TTL_MS)).toMatchObject({ ok: true });
    const held = await holdLease(store, "8", { id: holderId(), host: hostname(), pid: process.pid });
    expect(held.tookOver).toBe(true);
    await held.release();
  });

  it("a holder whose id names no pid space (an older dissent's, a library caller's) is judged by its heartbeat alone", async () => {
    b = make();
    const store = await b.open();
    expect(await store.lease.acquire("9", { id: crypto.randomUUID(), host: hostname(), pid: GONE }, LEASE_TTL_MS)).toMatchObject({ ok: true });
    await expect(holdLease(store, "9", { id: holderId(), host: hostname(), pid: process.pid })).rejects.toSatisfy((e) => LeaseHeld.isInstance(e));
  });
});
