import { hostname } from "node:os";
import type { Config } from "../contracts/config.js";
import { ConfigError, UsageError } from "../errors.js";
import { LEASE_RENEW_MS, LEASE_TTL_MS } from "../pipeline/lease.js";
import type { Limits } from "./rounds.js";

/** How one `dissent factory` process runs (docs/factory.md). */
export interface FactorySettings {
  /** How often the tracker is polled (`factory.poll_interval_s`). */
  pollIntervalMs: number;
  /** Issues planned at once by this process (`--concurrency`, else `factory.concurrency`). */
  concurrency: number;
  /** Failed attempts per issue and cycle before the factory stops retrying it (`factory.max_attempts`). */
  maxAttempts: number;
  /** One poll, plan what it found, exit. */
  once: boolean;
  /** The planning lease's time to live and renewal period (docs/issue.md: 60 s and 10 s). */
  leaseTtlMs: number;
  leaseRenewMs: number;
  /** How this worker names its host in leases ("host, pid" in messages); default the machine's name. */
  host: string;
  /** How often an idle worker looks for queued jobs other workers enqueued (PostgreSQL). */
  queuePollMs: number;
  /** The ceilings of an issue's life, by setting: an issue held by one is not retried until it is raised. */
  limits: Limits;
  /** Implement ready issues too (`factory.implement`, docs/implement.md). */
  implement: boolean;
  /** Coding agents at once in the factory, across every worker sharing the store (`implement.max_concurrency`). */
  implementConcurrency: number;
}

/** How long after a lease held by another worker is found the round is tried again: the lease has expired by then. */
export const FOLLOW_UP_MARGIN_MS = 1_000;
/** Default `queuePollMs`. */
export const QUEUE_POLL_MS = 500;

/**
 * Environment knobs, for tests and benchmarks: a lease short enough that a takeover after `kill -9`
 * takes seconds, and a host name per worker so two workers on one machine look like two machines
 * (a local holder that is gone is otherwise taken over at once, without waiting for expiry).
 */
export const ENV = { leaseTtlMs: "DISSENT_LEASE_TTL_MS", leaseRenewMs: "DISSENT_LEASE_RENEW_MS", host: "DISSENT_WORKER_HOST" } as const;

function envMs(env: Record<string, string | undefined>, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  if (!/^\d{1,9}$/.test(raw) || Number(raw) < 100) throw new ConfigError(`${name} must be a number of milliseconds (at least 100), not '${raw}'`);
  return Number(raw);
}

/** The factory's settings from the config, the command's flags and the environment. */
export function factorySettings(config: Config, flags: { once?: boolean; concurrency?: string }, env: Record<string, string | undefined>): FactorySettings {
  let concurrency = config.factory.concurrency;
  if (flags.concurrency !== undefined) {
    if (!/^\d{1,3}$/.test(flags.concurrency) || Number(flags.concurrency) < 1 || Number(flags.concurrency) > 256) {
      throw new UsageError(`--concurrency must be a whole number from 1 to 256, not '${flags.concurrency}'`);
    }
    concurrency = Number(flags.concurrency);
  }
  const leaseTtlMs = envMs(env, ENV.leaseTtlMs, LEASE_TTL_MS);
  const leaseRenewMs = envMs(env, ENV.leaseRenewMs, Math.min(LEASE_RENEW_MS, Math.floor(leaseTtlMs / 3)));
  if (leaseRenewMs >= leaseTtlMs)
    throw new ConfigError(`${ENV.leaseRenewMs} (${leaseRenewMs}) must be shorter than the lease's time to live (${leaseTtlMs} ms)`);
  const host = env[ENV.host] || hostname();
  if (!/^[\w.:-]{1,255}$/.test(host)) throw new ConfigError(`${ENV.host} must be a host name, not '${host}'`);
  return {
    pollIntervalMs: Math.round(config.factory.pollIntervalS * 1000),
    concurrency,
    maxAttempts: config.factory.maxAttempts,
    once: flags.once === true,
    leaseTtlMs,
    leaseRenewMs,
    host,
    queuePollMs: QUEUE_POLL_MS,
    limits: {
      "budget.max_calls_per_issue": config.budget.maxCallsPerIssue,
      "budget.max_cycles_per_issue": config.budget.maxCyclesPerIssue,
      "budget.max_usd_per_issue": config.budget.maxUsdPerIssue,
      "implement.max_attempts_per_issue": config.implement?.maxAttemptsPerIssue ?? null,
      "implement.max_agent_ms_per_issue": config.implement?.maxAgentMsPerIssue ?? null,
    },
    implement: config.factory.implement && config.implement !== null,
    implementConcurrency: config.implement?.maxConcurrency ?? 1,
  };
}

/**
 * The longest a round waits after its worker died before another worker resumes it (PostgreSQL):
 * the dead worker's job returns to the queue when its connection drops (at once after `kill -9`;
 * within the lease's time to live when a whole machine is lost, by the job connection's idle
 * timeout); the next worker to fetch it finds the lease still held, and queues the round again for
 * when that lease has expired. docs/factory.md asks for 90 s.
 */
export function worstTakeoverMs(s: Pick<FactorySettings, "leaseTtlMs" | "queuePollMs">): number {
  return s.leaseTtlMs + FOLLOW_UP_MARGIN_MS + 2 * s.queuePollMs;
}
