/**
 * A real, throwaway PostgreSQL for tests.
 *
 * `startPostgres()` creates a private cluster (initdb into a fresh temp dir,
 * trust auth, TCP on 127.0.0.1 only, durability switched off) and returns its
 * URL. Tests normally don't call it: `pg-global-setup.ts` (a vitest
 * globalSetup) runs a tiny broker in the main vitest process that starts ONE
 * cluster lazily, on the first request, and test files call `freshDatabase()`
 * to get their own new, empty database in it. A run that has no PostgreSQL
 * test never starts a cluster.
 *
 * As root (CI, this dev box) `initdb` refuses to run, so the cluster is created
 * and run as the `postgres` user via `runuser`; as any other user the binaries
 * run directly.
 *
 * Clean-up layers, so a killed run never breaks the next one: every cluster
 * lives in its own mkdtemp dir on a random port; `stop()` removes it; a
 * `process.on("exit")` hook stops it if the owner exits without `stop()`; a
 * detached watchdog shell stops it when the owner dies even by SIGKILL (it
 * waits for EOF on a pipe from the owner); and `startPostgres()` sweeps dirs
 * left by dead owners.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { chown, mkdir, mkdtemp, readFile, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import pg from "pg";

export interface PgCluster {
  /** postgres://postgres@127.0.0.1:PORT/postgres */
  url: string;
  port: number;
  /** The cluster's data directory (inside a private temp dir). */
  dataDir: string;
  /** Creates a new, empty database and returns its URL. */
  createDatabase(name?: string): Promise<string>;
  /** Immediate shutdown, then removes the temp dir. Idempotent. */
  stop(): Promise<void>;
  /** `pg_ctl -m fast stop`, keeping the data: every connection gets 57P01, new ones are refused (a database going away). */
  pause(): Promise<void>;
  /** Starts a paused cluster again on the same port. */
  resume(): Promise<void>;
}

declare module "vitest" {
  export interface ProvidedContext {
    /** Base URL of the database broker run by test/support/pg-global-setup.ts. */
    pgBroker: string;
  }
}

const DIR_PREFIX = "dissent-pg-";
const OWNER_FILE = "owner.pid";
const MISSING =
  "PostgreSQL server binaries (initdb, pg_ctl) were not found in /usr/lib/postgresql/<version>/bin or on PATH: " +
  "install Debian's postgresql package (apt-get install postgresql); .ci/run does.";

// ---------------------------------------------------------------------------
// Binaries and users

interface Bins {
  initdb: string;
  pgCtl: string;
}

function findBins(): Bins {
  const root = "/usr/lib/postgresql";
  if (existsSync(root)) {
    const versions = readdirSync(root)
      .filter((v) => /^\d+(\.\d+)?$/.test(v))
      .sort((a, b) => Number(b) - Number(a));
    for (const v of versions) {
      const bin = join(root, v, "bin");
      if (existsSync(join(bin, "initdb")) && existsSync(join(bin, "pg_ctl"))) {
        return { initdb: join(bin, "initdb"), pgCtl: join(bin, "pg_ctl") };
      }
    }
  }
  const onPath = (name: string): string | undefined =>
    (process.env.PATH ?? "")
      .split(":")
      .filter(Boolean)
      .map((d) => join(d, name))
      .find((p) => existsSync(p));
  const initdb = onPath("initdb");
  const pgCtl = onPath("pg_ctl");
  if (initdb && pgCtl) return { initdb, pgCtl };
  throw new Error(MISSING);
}

const isRoot = (): boolean => typeof process.getuid === "function" && process.getuid() === 0;

function runuserPath(): string {
  for (const p of ["/usr/sbin/runuser", "/sbin/runuser", "/usr/bin/runuser", "/bin/runuser"]) {
    if (existsSync(p)) return p;
  }
  throw new Error("running as root but `runuser` (util-linux) is missing: cannot run PostgreSQL as the postgres user");
}

function postgresIds(): { uid: number; gid: number } {
  const r = spawnSync("id", ["-u", "postgres"], { encoding: "utf8" });
  const g = spawnSync("id", ["-g", "postgres"], { encoding: "utf8" });
  if (r.status !== 0 || g.status !== 0) {
    throw new Error(`running as root but there is no \`postgres\` user to run PostgreSQL as. ${MISSING}`);
  }
  return { uid: Number(r.stdout.trim()), gid: Number(g.stdout.trim()) };
}

/** argv that runs `bin args…` as the cluster's owner. */
function asOwner(bin: string, args: string[]): [string, string[]] {
  return isRoot() ? [runuserPath(), ["-u", "postgres", "--", bin, ...args]] : [bin, args];
}

/** The environment for PostgreSQL tools: ours minus libpq/PG* variables. */
function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("PG")) env[k] = v;
  env.LC_ALL = "C";
  return env;
}

function run(cmd: string, args: string[], cwd: string): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, env: cleanEnv(), stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString("utf8")));
    child.stderr.on("data", (d: Buffer) => (out += d.toString("utf8")));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, out }));
  });
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      const port = typeof addr === "object" && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

// ---------------------------------------------------------------------------
// Leftovers from killed runs

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Stops and removes clusters in `base` whose owning process is gone. Best effort. */
function sweepStale(base: string, bins: Bins): void {
  let names: string[];
  try {
    names = readdirSync(base).filter((n) => n.startsWith(DIR_PREFIX));
  } catch {
    return;
  }
  for (const name of names) {
    const dir = join(base, name);
    try {
      const owner = Number(readFileSync(join(dir, OWNER_FILE), "utf8").trim());
      if (!Number.isInteger(owner) || owner <= 0 || alive(owner)) continue;
      const [cmd, args] = asOwner(bins.pgCtl, ["-D", join(dir, "data"), "-m", "immediate", "-w", "stop"]);
      spawnSync(cmd, args, { cwd: dir, env: cleanEnv(), stdio: "ignore", timeout: 15_000 });
      rmSync(dir, { recursive: true, force: true });
    } catch {
      // no owner file (still being created, or not ours): leave it alone
    }
  }
}

// ---------------------------------------------------------------------------
// The cluster

/** A temp dir the cluster's owner can use: os.tmpdir(), or /tmp if postgres can't reach that. */
async function makeRootDir(): Promise<{ base: string; dir: string }> {
  const ids = isRoot() ? postgresIds() : undefined;
  const bases = [...new Set([tmpdir(), "/tmp"])];
  let lastErr: unknown;
  for (const base of bases) {
    let dir: string | undefined;
    try {
      dir = await mkdtemp(join(base, DIR_PREFIX));
      await writeFile(join(dir, OWNER_FILE), `${process.pid}\n`);
      if (ids) {
        await chown(dir, ids.uid, ids.gid);
        // the postgres user must be able to reach the dir through every parent
        const probe = spawnSync(runuserPath(), ["-u", "postgres", "--", "test", "-w", dir], { stdio: "ignore" });
        if (probe.status !== 0) throw new Error(`the postgres user cannot write ${dir}`);
      }
      return { base, dir };
    } catch (err) {
      lastErr = err;
      if (dir) rmSync(dir, { recursive: true, force: true });
    }
  }
  throw new Error(`could not create a temp dir for PostgreSQL: ${String(lastErr)}`);
}

/**
 * A detached shell that stops the cluster and removes its dir as soon as its
 * stdin (a pipe from this process) reaches EOF, i.e. when this process exits
 * for whatever reason, SIGKILL included. Writing "done" dismisses it.
 */
function startWatchdog(pgCtl: string, dataDir: string, rootDir: string): { dismiss(): void } {
  const runuser = isRoot() ? runuserPath() : "";
  const script = [
    'trap "" INT TERM HUP',
    'IFS= read -r line || line=""',
    '[ "$line" = done ] && exit 0',
    'if [ -n "$4" ]; then "$4" -u postgres -- "$1" -D "$2" -m immediate -w stop; else "$1" -D "$2" -m immediate -w stop; fi',
    'rm -rf "$3"',
  ].join("\n");
  const child = spawn("/bin/sh", ["-c", script, "pg-watchdog", pgCtl, dataDir, rootDir, runuser], {
    cwd: "/",
    env: cleanEnv(),
    detached: true,
    stdio: ["pipe", "ignore", "ignore"],
  });
  child.on("error", () => {});
  child.stdin?.on("error", () => {});
  child.unref();
  // don't let the pipe keep the event loop alive
  (child.stdin as unknown as { unref?: () => void } | null)?.unref?.();
  return {
    dismiss() {
      try {
        child.stdin?.end("done\n");
      } catch {
        // already gone
      }
    },
  };
}

function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

function withDatabase(url: string, db: string): string {
  const u = new URL(url);
  u.pathname = `/${encodeURIComponent(db)}`;
  return u.toString();
}

let dbCounter = 0;

/** Creates a new database (unique name unless given) in the server at `url`; returns its URL. */
export async function createDatabaseAt(url: string, name?: string): Promise<string> {
  const db = name ?? `t_${process.pid}_${++dbCounter}_${randomBytes(4).toString("hex")}`;
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(db)) throw new Error(`invalid database name: ${db}`);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${quoteIdent(db)}`);
  } finally {
    await client.end();
  }
  return withDatabase(url, db);
}

/** Starts a private PostgreSQL cluster. See the file comment. */
export async function startPostgres(): Promise<PgCluster> {
  const bins = findBins();
  const { base, dir } = await makeRootDir();
  sweepStale(base, bins);

  const dataDir = join(dir, "data");
  const sockDir = join(dir, "sock");
  const logFile = join(dir, "postgres.log");
  let stopped = false;
  let port = 0;

  const stopSync = (): void => {
    if (stopped) return;
    stopped = true;
    const [cmd, args] = asOwner(bins.pgCtl, ["-D", dataDir, "-m", "immediate", "-w", "stop"]);
    spawnSync(cmd, args, { cwd: dir, env: cleanEnv(), stdio: "ignore", timeout: 15_000 });
    rmSync(dir, { recursive: true, force: true });
  };
  process.on("exit", stopSync);
  const watchdog = startWatchdog(bins.pgCtl, dataDir, dir);

  const fail = async (what: string, out: string): Promise<never> => {
    let log = "";
    try {
      log = (await readFile(logFile, "utf8")).slice(-4000);
    } catch {
      // no log yet
    }
    stopSync();
    process.off("exit", stopSync);
    watchdog.dismiss();
    throw new Error(`${what}\n${out.trim()}${log ? `\n--- postgres.log ---\n${log.trim()}` : ""}`);
  };

  try {
    await mkdir(sockDir);
    if (isRoot()) {
      const ids = postgresIds();
      await chown(sockDir, ids.uid, ids.gid);
    }
    const init = asOwner(bins.initdb, ["-D", dataDir, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8", "--locale=C"]);
    const ir = await run(init[0], init[1], dir);
    if (ir.code !== 0) await fail(`initdb failed (exit ${ir.code})`, ir.out);

    // a free port can be taken between probing and binding: retry a few times
    for (let attempt = 1; ; attempt++) {
      port = await freePort();
      const opts = [
        `-p ${port}`,
        "-c listen_addresses=127.0.0.1",
        `-k ${sockDir}`,
        "-c fsync=off",
        "-c synchronous_commit=off",
        "-c full_page_writes=off",
        "-c max_connections=200",
      ].join(" ");
      const start = asOwner(bins.pgCtl, ["-D", dataDir, "-l", logFile, "-w", "-t", "60", "-o", opts, "start"]);
      const sr = await run(start[0], start[1], dir);
      if (sr.code === 0) break;
      const log = await readFile(logFile, "utf8").catch(() => "");
      if (attempt < 4 && /could not bind|already in use/i.test(log + sr.out)) continue;
      await fail(`pg_ctl start failed (exit ${sr.code})`, sr.out);
    }
  } catch (err) {
    if (!stopped) {
      stopSync();
      process.off("exit", stopSync);
      watchdog.dismiss();
    }
    throw err;
  }

  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const serverOpts = [
    `-p ${port}`,
    "-c listen_addresses=127.0.0.1",
    `-k ${sockDir}`,
    "-c fsync=off",
    "-c synchronous_commit=off",
    "-c full_page_writes=off",
    "-c max_connections=200",
  ].join(" ");
  return {
    url,
    port,
    dataDir,
    createDatabase: (name?: string) => createDatabaseAt(url, name),
    async pause() {
      const [cmd, args] = asOwner(bins.pgCtl, ["-D", dataDir, "-m", "fast", "-w", "stop"]);
      const r = await run(cmd, args, dir);
      if (r.code !== 0) throw new Error(`pg_ctl stop -m fast failed (exit ${r.code}): ${r.out}`);
    },
    async resume() {
      const [cmd, args] = asOwner(bins.pgCtl, ["-D", dataDir, "-l", logFile, "-w", "-t", "60", "-o", serverOpts, "start"]);
      const r = await run(cmd, args, dir);
      if (r.code !== 0) throw new Error(`pg_ctl start failed (exit ${r.code}): ${r.out}`);
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      process.off("exit", stopSync);
      const [cmd, args] = asOwner(bins.pgCtl, ["-D", dataDir, "-m", "immediate", "-w", "stop"]);
      await run(cmd, args, dir).catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
      watchdog.dismiss();
    },
  };
}

// ---------------------------------------------------------------------------
// For test files

/**
 * A new, empty database in the run's shared cluster (started on first use by
 * the broker in test/support/pg-global-setup.ts). Returns its URL.
 */
export async function freshDatabase(): Promise<string> {
  const { inject } = await import("vitest");
  const broker = inject("pgBroker");
  if (!broker) {
    throw new Error("freshDatabase(): no PostgreSQL broker. Add test/support/pg-global-setup.ts to `globalSetup` in vitest.config.ts.");
  }
  const res = await fetch(`${broker}/database`, { method: "POST" });
  const body = (await res.json()) as { url?: string; error?: string };
  if (!res.ok || !body.url) throw new Error(`freshDatabase(): ${body.error ?? `broker answered HTTP ${res.status}`}`);
  return body.url;
}
