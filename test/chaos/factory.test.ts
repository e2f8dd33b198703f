/**
 * Chaos, the factory (issue 20): two `dissent factory` workers on one PostgreSQL, a model server
 * that misbehaves now and then, and at seeded moments a worker stopped with SIGTERM (and started
 * again) or the database stopped with `pg_ctl -m fast` for a while (and every worker started again);
 * `dissent serve` watches it all with two clients that never read and one that reconnects as
 * EventSource does. Then the faults stop, one clean `factory --once` settles what is left, and the
 * invariants are checked: every issue in a documented state, no stage completed twice, no event
 * twice, no budget crossed, no transient label left, documented exit codes and one-line errors, no
 * secret in any sink, and the watching client saw every event once.
 */
import type { ChildProcess } from "node:child_process";
import { connect, type Socket } from "node:net";
import { afterAll, describe, expect, it, vi } from "vitest";
import { type CliResult, dissent, scratch } from "../support/cli.js";
import { type Fault, startFaultServer } from "../support/fault-server.js";
import { startPostgres } from "../support/postgres.js";
import { startDissent, until } from "../support/proc.js";
import { agreeableReply, rolesConfig } from "../support/roles-config.js";
import { check, injected, report, stderrHolds, stream, tally } from "./harness.js";

vi.setConfig({ testTimeout: 420_000 });

const KEY = "sk-chaos-factory-5e4d3c2b1a09";
const ISSUES = 6;
const MAX_CALLS = 60;
/** How long the faults go on (the settling run comes after). */
const CHAOS_MS = Number(process.env.DISSENT_CHAOS_FACTORY_MS ?? 40_000);
const FINAL = ["ready", "needs_replan", "hitl"];

const t = tally("factory");
afterAll(() => report(t));

interface Worker {
  name: string;
  child: ChildProcess;
  done: Promise<CliResult>;
  exited: boolean;
}

/** A reader of the live stream that reconnects with Last-Event-ID whenever the stream ends, as a browser's EventSource does. */
function eventSource(url: string) {
  const ids: number[] = [];
  let stopped = false;
  let abort = new AbortController();
  const loop = (async () => {
    while (!stopped) {
      abort = new AbortController();
      try {
        const res = await fetch(url, {
          headers: { accept: "text/event-stream", ...(ids.length ? { "last-event-id": String(ids.at(-1)) } : {}) },
          signal: abort.signal,
        });
        const reader = res.body?.pipeThrough(new TextDecoderStream()).getReader();
        let buffer = "";
        for (;;) {
          const next = await reader?.read();
          if (!next || next.done) break;
          buffer += next.value;
          for (let i = buffer.indexOf("\n\n"); i >= 0; i = buffer.indexOf("\n\n")) {
            const id = /^id: ?(\d+)$/m.exec(buffer.slice(0, i))?.[1];
            if (id !== undefined) ids.push(Number(id));
            buffer = buffer.slice(i + 2);
          }
        }
      } catch {
        // dropped or refused: reconnect, as EventSource does
      }
      if (!stopped) await new Promise((r) => setTimeout(r, 200));
    }
  })();
  return {
    ids,
    async close() {
      stopped = true;
      abort.abort();
      await loop;
    },
  };
}

describe("chaos: two factory workers, a flaky model, a database that goes away, signals, stalled dashboard clients", () => {
  it("every invariant holds once the faults stop", async () => {
    const faults = stream("factory", "faults");
    const chaos = stream("factory", "chaos");
    const answers = stream("factory", "answers");
    const cluster = await startPostgres();
    const databaseUrl = await cluster.createDatabase();
    let faulty = true;
    const server = await startFaultServer(
      (req) => {
        const reply = agreeableReply(req.body.model);
        // A producer now and then echoes the key into its artifact: every sink must redact it.
        return reply.startsWith("#") && answers.chance(0.2) ? `${reply}\n\nUsed key ${KEY} for the test.` : reply;
      },
      () => {
        if (!faulty || !faults.chance(0.06)) return undefined;
        const options: Fault[] = [
          { kind: "reset" },
          { kind: "status", status: 503 },
          { kind: "status", status: 500 },
          { kind: "cut_stream" },
          { kind: "length" },
        ];
        return faults.pick(options);
      },
    );
    const dir = scratch("dissent-chaos-factory-");
    const config = rolesConfig(
      server.url,
      `store: { type: postgres }\nfactory: { poll_interval_s: 0.3, max_attempts: 6 }\nbudget: { max_calls_per_issue: ${MAX_CALLS} }\ncall_timeout_ms: 5000\n`,
    ).replace(/base_url: "([^"]+)" }/, 'base_url: "$1", api_key_env: CHAOS_KEY }');
    dir.write("dissent.config.yaml", config);
    const env = {
      DISSENT_HOME: `${dir.dir}/home`,
      DISSENT_DATABASE_URL: databaseUrl,
      CHAOS_KEY: KEY,
      DISSENT_LEASE_TTL_MS: "3000",
      DISSENT_LEASE_RENEW_MS: "1000",
    };
    const cli = (args: string[], timeoutMs = 120_000) => dissent(args, { cwd: dir.dir, env, timeoutMs });
    const outputs: string[] = [];
    const sockets: Socket[] = [];
    try {
      for (let i = 0; i < ISSUES; i++) {
        const r = await cli(["issue", "new", "--title", `Chaos issue ${i + 1}: retry uploads on path ${i}`]);
        expect(r.code, r.stderr).toBe(0);
      }

      // The dashboard, with two clients that never read and one that reconnects whenever it is dropped.
      const serving = startDissent(["serve", "--port", "0", "--json"], { cwd: dir.dir, env });
      let serveOut = "";
      serving.child.stdout?.on("data", (d: Buffer) => (serveOut += d.toString("utf8")));
      await until(() => serveOut.includes("\n"), 30_000);
      const base = (JSON.parse(serveOut.split("\n")[0] ?? "{}") as { url: string }).url;
      const port = Number(new URL(base).port);
      for (let i = 0; i < 2; i++) {
        const s = connect({ host: "127.0.0.1", port });
        s.on("error", () => undefined);
        s.write("GET /api/events/stream?after=0 HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n");
        s.pause();
        sockets.push(s);
        injected(t, "sse_stalled_client");
      }
      const watcher = eventSource(new URL("/api/events/stream?after=0", base).href);

      // Two workers, as two machines (the lease's host differs).
      const workers = new Map<string, Worker>();
      const startWorker = (name: string) => {
        const { child, done } = startDissent(["factory", "--json"], { cwd: dir.dir, env: { ...env, DISSENT_WORKER_HOST: `chaos-${name}` } });
        const w: Worker = { name, child, done, exited: false };
        void done.then((r) => {
          w.exited = true;
          t.runs++;
          outputs.push(r.stdout, r.stderr);
          // A SIGTERM that lands before dissent has installed its handlers (a worker just started) ends it the system's way.
          check(t, [0, 1, 130, 143].includes(r.code ?? -1) || r.signal === "SIGTERM", `worker ${name}: exit ${r.code} (signal ${r.signal}) is not documented`);
          stderrHolds(t, r.stderr, `worker ${name} (exit ${r.code})`);
          if (r.code === 143) check(t, r.stderr === "", `worker ${name}: a requested stop printed ${JSON.stringify(r.stderr)}`);
        });
        workers.set(name, w);
      };
      startWorker("a");
      startWorker("b");

      const settled = async () => {
        const r = await cli(["issue", "list", "--json"]);
        if (r.code !== 0) return false;
        const list = JSON.parse(r.stdout) as { status: string }[];
        return list.length === ISSUES && list.every((i) => FINAL.includes(i.status));
      };
      /** Waits for a worker to end by itself; one that does not within 30 s is a violation, and is killed. */
      const ended = async (w: Worker, why: string) => {
        const out = await Promise.race([w.done.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 30_000))]);
        check(t, out, `worker ${w.name} did not stop within 30 s after ${why}`);
        if (!out) {
          w.child.kill("SIGKILL");
          await w.done;
        }
      };

      const until_ = Date.now() + CHAOS_MS;
      while (Date.now() < until_) {
        await new Promise((r) => setTimeout(r, 1_000 + chaos.int(2_000)));
        const action = chaos.pick(["sigterm", "sigterm", "pg", "none"] as const);
        if (action === "sigterm") {
          const w = chaos.pick([...workers.values()]);
          injected(t, "sigterm_worker");
          w.child.kill("SIGTERM");
          await ended(w, "SIGTERM");
          startWorker(w.name);
        } else if (action === "pg") {
          injected(t, "postgres_stopped");
          await cluster.pause();
          for (const w of workers.values()) await ended(w, "the database stopped");
          await new Promise((r) => setTimeout(r, 500 + chaos.int(1_500)));
          await cluster.resume();
          for (const w of [...workers.values()]) startWorker(w.name);
        }
        if (chaos.chance(0.3) && (await settled())) break;
      }

      // The faults stop; the workers are stopped; one clean run settles what is left.
      faulty = false;
      for (const [kind, n] of server.injected) injected(t, `model_${kind}`, n);
      for (const w of workers.values()) {
        w.child.kill("SIGTERM");
        await ended(w, "the final SIGTERM");
      }
      const settle = await cli(["factory", "--once", "--json"], 300_000);
      t.runs++;
      outputs.push(settle.stdout, settle.stderr);
      check(t, settle.code === 0 || settle.code === 1, `the settling run exited ${settle.code}: ${settle.stderr}`);
      stderrHolds(t, settle.stderr, "the settling run");
      // An issue whose attempts were used up resumes to a documented state when planned by hand.
      const list = JSON.parse((await cli(["issue", "list", "--json"])).stdout) as { id: string; status: string }[];
      for (const issue of list.filter((i) => !FINAL.includes(i.status))) {
        const byHand = await cli(["issue", "plan", issue.id, "--json"], 300_000);
        t.runs++;
        outputs.push(byHand.stdout, byHand.stderr);
        check(t, byHand.code === 0, `issue ${issue.id}: issue plan by hand exited ${byHand.code}: ${byHand.stderr}`);
      }

      // The invariants.
      const events = (await cli(["events", "--json"])).stdout.split("\n").filter(Boolean);
      check(t, new Set(events).size === events.length, "an event appears twice in the log");
      const parsed = events.map((l) => JSON.parse(l) as { type: string; issue_id: string | null; stage?: string; cycle?: number });
      for (let i = 1; i <= ISSUES; i++) {
        const id = String(i);
        const show = JSON.parse((await cli(["issue", "show", id, "--json"])).stdout) as { status: string; labels: string[]; calls: number; cycle: number };
        check(t, FINAL.includes(show.status), `issue ${id} ended ${show.status}, not a documented state`);
        check(
          t,
          show.labels.every((l) => !l.endsWith("-running")),
          `issue ${id} kept a transient label: ${show.labels.join(", ")}`,
        );
        check(t, show.calls <= MAX_CALLS, `issue ${id} made ${show.calls} network calls, past its budget of ${MAX_CALLS}`);
        const completed = parsed.filter((e) => e.issue_id === id && e.type === "AdversarialStageCompleted").map((e) => `${e.stage}/${e.cycle}`);
        check(t, new Set(completed).size === completed.length, `issue ${id}: a stage completed twice (${completed.join(", ")})`);
      }
      const api = (await (await fetch(new URL("/api/events?after=0&limit=1000", base))).json()) as { events: { seq: number }[]; last_seq: number };
      await until(() => (watcher.ids.at(-1) ?? 0) >= api.last_seq, 30_000).catch(() => undefined);
      await watcher.close();
      const all: number[] = [];
      for (let after = 0; ; ) {
        const page = (await (await fetch(new URL(`/api/events?after=${after}&limit=1000`, base))).json()) as {
          events: { seq: number }[];
          next_after: number | null;
        };
        all.push(...page.events.map((e) => e.seq));
        if (!page.next_after || page.events.length === 0) break;
        after = page.next_after;
      }
      check(
        t,
        JSON.stringify(watcher.ids) === JSON.stringify(all),
        `the dashboard client saw ${watcher.ids.length} events, the log holds ${all.length} (none missed, none twice)`,
      );

      serving.child.kill("SIGTERM");
      const served = await serving.done;
      t.runs++;
      outputs.push(served.stdout, served.stderr);
      check(t, served.code === 143, `serve exited ${served.code} after SIGTERM`);
      check(
        t,
        served.stderr.split("\n").every((l) => l === "" || l.startsWith("dissent: warning: ")),
        `serve printed something other than warnings: ${served.stderr.slice(0, 300)}`,
      );
      check(
        t,
        [...outputs, ...events].every((s) => !s.includes(KEY)),
        "the key reached a sink",
      );
    } finally {
      for (const s of sockets) s.destroy();
      await server.close();
      await cluster.stop();
      dir.cleanup();
    }
    expect(t.violations).toEqual([]);
  });
});
