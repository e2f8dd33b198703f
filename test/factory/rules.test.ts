/**
 * The factory's rules as pure functions (src/factory): its settings and their production defaults
 * (the takeover bound of docs/factory.md is checked on the values a user gets, not the short lease the
 * process tests use), which issues a poll plans and in which cycle, attempts and backoff, and what
 * an error means for the factory.
 */
import { hostname } from "node:os";
import { describe, expect, it } from "vitest";
import { configFromObject } from "../../src/config/load.js";
import type { EventOf } from "../../src/contracts/events.js";
import { ConfigError, Interrupted, LeaseHeld, ProviderAuthError, ProviderError, RunError, StoreError, UsageError, BudgetExceeded } from "../../src/errors.js";
import { MAX_BACKOFF_MS, retryDelayMs } from "../../src/factory/backoff.js";
import { attemptsOf, cycleToPlan, heldBy, readiness, roundKey } from "../../src/factory/rounds.js";
import { factorySettings, worstTakeoverMs } from "../../src/factory/settings.js";
import { verdictOf } from "../../src/factory/verdict.js";
import { LEASE_RENEW_MS, LEASE_TTL_MS } from "../../src/pipeline/lease.js";
import type { PlanRow } from "../../src/store/port.js";

const config = (factory?: Record<string, unknown>) =>
  configFromObject(
    { providers: { local: { type: "openai-compatible", base_url: "http://127.0.0.1:9/v1" } }, ...(factory ? { factory } : {}) },
    { env: {}, cwd: "/" },
  );
const row = (status: PlanRow["status"], cycle = 1): PlanRow => ({
  issue_id: "7",
  cycle,
  status,
  route: null,
  route_reason: null,
  calls: 0,
  cost_usd: 0,
  concern_seq: 0,
});
const failure = (cycle: number, attempt: number, retryAt: string | null): EventOf<"IssuePlanFailed"> => ({
  type: "IssuePlanFailed",
  at: "2026-05-17T12:00:00.000Z",
  issue_id: "7",
  cycle,
  attempt,
  error: `boom ${attempt}`,
  retry_at: retryAt,
});

describe("factory settings", () => {
  it("production defaults: poll every 60 s, 4 at once, 3 attempts, the lease of docs/issue.md (60 s, renewed every 10 s), this machine's name", () => {
    const s = factorySettings(config(), {}, {});
    expect(s).toEqual({
      pollIntervalMs: 60_000,
      concurrency: 4,
      maxAttempts: 3,
      once: false,
      leaseTtlMs: 60_000,
      leaseRenewMs: 10_000,
      host: hostname(),
      queuePollMs: 500,
      // The ceilings of an issue's life, as the config sets them (defaults: 60 calls, 3 cycles, no dollar ceiling).
      limits: {
        "budget.max_calls_per_issue": 60,
        "budget.max_cycles_per_issue": 3,
        "budget.max_usd_per_issue": null,
        "implement.max_attempts_per_issue": null,
        "implement.max_agent_ms_per_issue": null,
      },
      // No implement: section: the factory plans only.
      implement: false,
      implementConcurrency: 1,
    });
    expect([LEASE_TTL_MS, LEASE_RENEW_MS]).toEqual([60_000, 10_000]);
  });

  it("with the production defaults, a dead worker's round is taken over within docs/factory.md's 90 s", () => {
    const bound = worstTakeoverMs(factorySettings(config(), {}, {}));
    expect(bound).toBeGreaterThanOrEqual(LEASE_TTL_MS); // it waits for the dead worker's lease to expire…
    expect(bound).toBeLessThanOrEqual(90_000); // …and no longer than the contract allows
  });

  it("reads the config, the flags and the test knobs; refuses what it cannot use with the flag or variable named", () => {
    const s = factorySettings(
      config({ poll_interval_s: 0.5, concurrency: 8, max_attempts: 5 }),
      { once: true, concurrency: "2" },
      { DISSENT_LEASE_TTL_MS: "3000", DISSENT_WORKER_HOST: "worker-a" },
    );
    expect(s).toMatchObject({ pollIntervalMs: 500, concurrency: 2, maxAttempts: 5, once: true, leaseTtlMs: 3000, leaseRenewMs: 1000, host: "worker-a" });
    expect(worstTakeoverMs(s)).toBe(3000 + 1000 + 1000);
    for (const bad of ["0", "257", "2.5", "many", ""]) expect(() => factorySettings(config(), { concurrency: bad }, {})).toThrow(UsageError);
    expect(() => factorySettings(config(), {}, { DISSENT_LEASE_TTL_MS: "soon" })).toThrow(/DISSENT_LEASE_TTL_MS must be a number of milliseconds/);
    expect(() => factorySettings(config(), {}, { DISSENT_LEASE_TTL_MS: "1000", DISSENT_LEASE_RENEW_MS: "1000" })).toThrow(ConfigError);
    expect(() => factorySettings(config(), {}, { DISSENT_WORKER_HOST: "a b" })).toThrow(/DISSENT_WORKER_HOST/);
  });
});

describe("which cycle a poll plans", () => {
  it("a new dissent-find issue: cycle 1; one planned before and sent back to find: the next cycle", () => {
    expect(cycleToPlan(["dissent-find"], undefined)).toBe(1);
    expect(cycleToPlan(["dissent-find", "bug"], row("ready", 2))).toBe(3);
  });

  it("a cycle under way (interrupted, or its worker died) is resumed; one that ran out of budget is tried again in a new cycle", () => {
    expect(cycleToPlan(["dissent-plan"], row("planning", 2))).toBe(2);
    expect(cycleToPlan(["dissent-find"], row("planning", 1))).toBe(1); // killed before its label moved
    expect(cycleToPlan(["dissent-plan", "dissent-adv-shape-running"], row("planning", 1))).toBe(1);
    expect(cycleToPlan(["dissent-plan"], row("budget", 1))).toBe(2);
    // Stopped after its outcome label moved, before the cycle's commit: the label says done, the store does not.
    expect(cycleToPlan(["dissent-ready"], row("planning", 1))).toBe(1);
    expect(cycleToPlan(["dissent-hitl"], row("planning", 2))).toBe(2);
  });

  it("planned, waiting for a re-plan by hand, merged, or not dissent's: nothing", () => {
    expect(cycleToPlan(["dissent-ready"], row("ready"))).toBeUndefined();
    expect(cycleToPlan(["dissent-hitl"], row("hitl"))).toBeUndefined();
    expect(cycleToPlan(["dissent-plan"], row("needs_replan"))).toBeUndefined();
    expect(cycleToPlan(["dissent-plan"], undefined)).toBeUndefined();
    expect(cycleToPlan(["dissent-fixed"], row("fixed"))).toBeUndefined();
    expect(cycleToPlan(["bug"], undefined)).toBeUndefined();
  });

  it("a round's job key names the issue and the cycle", () => {
    expect(roundKey({ issueId: "7", cycle: 2 })).toBe("7#2");
  });
});

describe("attempts and backoff", () => {
  const now = Date.parse("2026-05-17T12:00:00.000Z");
  it("counts the failures of the round's cycle only; due once the last failure's retry_at has passed; given up after max_attempts", () => {
    const failures = [failure(1, 1, "2026-05-17T11:00:00.000Z"), failure(1, 2, "2026-05-17T11:00:00.000Z"), failure(2, 1, "2026-05-17T12:01:00.000Z")];
    expect(attemptsOf(failures, 1)).toEqual({ failed: 2, ceiling: null, retryAt: "2026-05-17T11:00:00.000Z", lastError: "boom 2" });
    expect(readiness(attemptsOf(failures, 1), 3, now)).toEqual({ ready: true, attempt: 3 });
    expect(readiness(attemptsOf(failures, 1), 2, now)).toEqual({ ready: false, why: "gave_up", failed: 2, lastError: "boom 2" });
    expect(readiness(attemptsOf(failures, 2), 3, now)).toEqual({ ready: false, why: "backoff", retryAt: "2026-05-17T12:01:00.000Z" });
    expect(readiness(attemptsOf(failures, 3), 3, now)).toEqual({ ready: true, attempt: 1 });
  });

  it("a ceiling failure holds the issue — its own cycle and the next — until the setting is raised, and says so instead of retrying", () => {
    const ceiling = { ...failure(2, 1, null), error: "issue 7 has had 1 planning cycle…", ceiling: { setting: "budget.max_cycles_per_issue", max: 1 } };
    const limits = { "budget.max_cycles_per_issue": 1, "budget.max_calls_per_issue": 60 };
    // The row is still at cycle 1 (the refused cycle 2 never started); the factory would plan cycle 2, then 3.
    expect(heldBy([ceiling], 1, limits)).toBe(ceiling);
    expect(readiness(attemptsOf([ceiling], 2, { fromCycle: 1, limits }), 3, now)).toEqual({
      ready: false,
      why: "ceiling",
      setting: "budget.max_cycles_per_issue",
      lastError: ceiling.error,
    });
    expect(readiness(attemptsOf([ceiling], 3, { fromCycle: 2, limits }), 3, now)).toMatchObject({ ready: false, why: "ceiling" });
    // Raised: tried again, as attempt 1 of the new cycle's round.
    expect(readiness(attemptsOf([ceiling], 2, { fromCycle: 1, limits: { ...limits, "budget.max_cycles_per_issue": 3 } }), 3, now)).toEqual({
      ready: true,
      attempt: 2,
    });
    // A later cycle that was planned moves past it.
    expect(heldBy([ceiling], 3, limits)).toBeUndefined();
  });

  it("waits one poll interval after the first failure, doubling after each further one, at most an hour, never less than Retry-After", () => {
    expect([1, 2, 3, 4].map((a) => retryDelayMs(a, 60_000))).toEqual([60_000, 120_000, 240_000, 480_000]);
    expect(retryDelayMs(40, 60_000)).toBe(MAX_BACKOFF_MS);
    expect(retryDelayMs(1, 1_000, 30_000)).toBe(30_000);
    expect(retryDelayMs(3, 1_000, 10)).toBe(4_000);
  });
});

describe("what an error means for the factory", () => {
  it("auth, configuration and an unusable store stop it; an interruption is the shutdown; another worker's lease is not a failure; the rest are the issue's failure", () => {
    expect(verdictOf(new ConfigError("x"))).toBe("fatal");
    expect(verdictOf(new ProviderAuthError("401"))).toBe("fatal");
    expect(verdictOf(new StoreError("down"))).toBe("fatal");
    expect(verdictOf(new Interrupted("stop", { signal: "SIGTERM" }))).toBe("interrupted");
    expect(verdictOf(new LeaseHeld("held", { holder: { host: "h", pid: 1, since: "s" } }))).toBe("lease_held");
    expect(verdictOf(new ProviderError("503"))).toBe("failed");
    expect(verdictOf(new BudgetExceeded("over", { max: 30, used: 30 }))).toBe("failed");
    expect(verdictOf(new RunError("no plan"))).toBe("failed");
    expect(verdictOf(new UsageError("illegal move"))).toBe("failed");
    expect(verdictOf(new Error("bug"))).toBe("failed");
  });
});
