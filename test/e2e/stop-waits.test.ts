/**
 * Issue 32, "Signals": a wait that can be aborted is aborted by the first SIGTERM — the process ends
 * by its orderly stop, never by the 9 s deadline (whose line, `still stopping … exiting now`, says the
 * stop did not finish). Each wait is a real one: a PostgreSQL port that accepts and never answers,
 * and a git that hangs in the middle of `issue implement` (first on PATH, the real git otherwise).
 * Stop times are measured by bench/signals.mjs, not here.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { execFileSync } from "node:child_process";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { scratch } from "../support/cli.js";
import { implementWorld, type ImplementWorld } from "../support/implement-world.js";
import { startDissent, stopAll, until, type Started } from "../support/proc.js";

vi.setConfig({ testTimeout: 240_000 });

const started: Started[] = [];
afterEach(() => stopAll(started));

/** Every stderr line is dissent's; the last is the interrupted run's; the deadline never fired. */
function stoppedInOrder(r: { code: number | null; stderr: string }): void {
  expect(r.code, r.stderr).toBe(143);
  const lines = r.stderr.split("\n").filter((l) => l !== "");
  expect(lines.filter((l) => l.includes("still stopping"))).toEqual([]);
  expect(lines.at(-1)).toBe("dissent: error: terminated (SIGTERM)");
}

const running = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe("a PostgreSQL server that accepts the connection and never answers", () => {
  let s: ReturnType<typeof scratch>;
  let server: Server;
  const sockets: Socket[] = [];
  let url = "";
  beforeAll(async () => {
    s = scratch("dissent-stop-pg-");
    server = createServer((socket) => {
      sockets.push(socket);
      socket.on("error", () => undefined);
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const port = (server.address() as { port: number }).port;
    url = `postgres://dissent:secret@127.0.0.1:${port}/dissent`;
    s.write("pg.yaml", "store: { type: postgres }\n");
  });
  afterAll(async () => {
    for (const x of sockets) x.destroy();
    await new Promise((r) => server.close(r));
    s.cleanup();
  });

  it("issue list: one SIGTERM while it connects ends it with 143 — the opening is aborted, not waited out", async () => {
    const before = sockets.length;
    const x = startDissent(["issue", "list", "--config", "pg.yaml"], { cwd: s.dir, env: { DISSENT_HOME: join(s.dir, "home"), DISSENT_DATABASE_URL: url } });
    started.push(x);
    await until(() => sockets.length > before || x.child.exitCode !== null, 60_000);
    expect(x.child.exitCode).toBe(null);
    x.child.kill("SIGTERM");
    const r = await x.done;
    stoppedInOrder(r);
    expect(r.stderr).not.toContain("secret"); // the URL's password never shown
  });
});

describe("a git that hangs while issue implement runs", () => {
  let w: ImplementWorld;
  let id = "";
  let bin = "";
  let marks = "";
  beforeAll(async () => {
    w = await implementWorld({ mode: "good" });
    id = await w.readyIssue();
    // `git diff` (the attempt's diff, after the agent) writes its pid and sleeps; every other git is the real one.
    bin = join(w.dir, "bin");
    marks = join(w.dir, "marks");
    mkdirSync(bin, { recursive: true });
    mkdirSync(marks, { recursive: true });
    const real = execFileSync("sh", ["-c", "command -v git"], { encoding: "utf8" }).trim();
    const fake = join(bin, "git");
    const script = `#!/bin/sh\nfor a in "$@"; do if [ "$a" = diff ]; then echo $$ > ${marks}/git.pid; exec sleep 600; fi; done\nexec ${real} "$@"\n`;
    execFileSync("sh", ["-c", `cat > ${fake}`], { input: script });
    chmodSync(fake, 0o755);
  });
  afterAll(() => w.close());

  it("one SIGTERM ends it with 143 and the hung git goes with it", async () => {
    const x = startDissent(["issue", "implement", id], {
      cwd: w.dir,
      env: { DISSENT_HOME: w.home, AGENT_MODE: "good", AGENT_LOG: w.agentLog, PATH: `${bin}:${process.env.PATH ?? ""}` },
    });
    started.push(x);
    const pidFile = join(marks, "git.pid");
    await until(() => (existsSync(pidFile) && readFileSync(pidFile, "utf8").trim() !== "") || x.child.exitCode !== null, 120_000);
    expect(x.child.exitCode).toBe(null);
    const git = Number(readFileSync(pidFile, "utf8"));
    x.child.kill("SIGTERM");
    const r = await x.done;
    stoppedInOrder(r);
    await until(() => !running(git), 15_000);
  });
});
