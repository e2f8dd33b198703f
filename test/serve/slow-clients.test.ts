/**
 * Issue 20 items 2 and 12: dashboard clients that do not read. A client whose queue passes the
 * bound is dropped — the server never holds its backlog — and reconnecting with Last-Event-ID it
 * misses nothing and gets nothing twice; a reader that keeps up is never dropped. 500 clients at
 * once print no MaxListenersExceededWarning. A real server (Hono on Node) over a real store.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { startServer, type RunningServer } from "../../src/serve/server.js";
import { openSqliteStore } from "../../src/store/sqlite.js";
import type { Store } from "../../src/store/port.js";
import { localTracker } from "../../src/trackers/local.js";
import { until } from "../support/proc.js";
import { openStream } from "./sse-client.js";

vi.setConfig({ testTimeout: 120_000 });

let store: Store | undefined;
let server: RunningServer | undefined;
let home: string | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await server?.close();
  await store?.close();
  if (home) rmSync(home, { recursive: true, force: true });
  server = store = home = undefined;
});

/** A dashboard over a fresh embedded store; `maxQueueBytes` lowers the per-client bound so the test stays small. */
async function dashboard(maxQueueBytes?: number): Promise<{ url: string; port: number; store: Store }> {
  home = mkdtempSync(join(tmpdir(), "dissent-slow-"));
  store = await openSqliteStore(home);
  server = await startServer({
    store,
    tracker: localTracker(store),
    redact: (t) => t,
    host: "127.0.0.1",
    port: 0,
    warn: () => undefined,
    webDir: join(home, "no-page"),
    ...(maxQueueBytes ? { maxQueueBytes } : {}),
  });
  await server.dashboard.ready;
  return { url: server.url, port: server.port, store };
}

/** A client that asks for the stream and then reads nothing: its socket is paused, its receive window fills. */
function stalledClient(port: number, after = 0): { socket: Socket; closed: Promise<void> } {
  const socket = connect({ host: "127.0.0.1", port });
  sockets.push(socket);
  socket.setNoDelay(true);
  socket.write(`GET /api/events/stream?after=${after} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n`);
  socket.pause();
  const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
  return { socket, closed };
}

/** What a stalled client had received when the server let it go: the ids of the complete events in its buffers (it reads them now). */
async function drain(socket: Socket, closed: Promise<void>): Promise<number[]> {
  let text = "";
  socket.on("data", (d: Buffer) => (text += d.toString("utf8")));
  socket.resume();
  await closed;
  const body = text.slice(text.indexOf("\r\n\r\n") + 4);
  // Chunked framing aside, every complete event is "id: N\n\n"-terminated after its data line.
  return [...body.matchAll(/\nid: (\d+)\n\n/g)].map((m) => Number(m[1]));
}

/** An event carrying `size` bytes of text, as a failed round's error message can. */
const bulky = (n: number, size: number) => ({
  type: "IssuePlanFailed" as const,
  issue_id: String(1 + (n % 7)),
  cycle: 1,
  attempt: 1,
  error: `${n} ${"x".repeat(size)}`,
  retry_at: null,
});

describe("slow dashboard clients", () => {
  it("clients that never read are dropped once their queue stays past the bound; each resumes from Last-Event-ID missing nothing; a reader that keeps up stays", async () => {
    const d = await dashboard();
    const stalled = Array.from({ length: 5 }, () => stalledClient(d.port));
    const reader = openStream(new URL("/api/events/stream?after=0", d.url).href);
    expect(await reader.opened).toBe(200);
    // 2,000 events of 20 KB (40 MB): more than any socket buffers can hide from the server. The reader
    // keeps up (it shares this process's event loop with the writes, so each hundred waits for it).
    for (let i = 0; i < 2000; i++) {
      await d.store.append([bulky(i, 20_000)]);
      if (i % 100 === 99) await until(() => reader.events.length >= i + 1 || reader.error() !== undefined, 60_000);
    }
    const last = await d.store.lastSeq();

    // Every stalled client was cut off by the server: reading what its buffers hold, it comes to the end of a closed connection.
    const got = await Promise.all(stalled.map((s) => drain(s.socket, s.closed)));
    for (const ids of got) expect(ids.length).toBeLessThan(2000);

    // Each reconnects where it stopped, as EventSource does with Last-Event-ID: the rest comes from the store.
    for (const ids of got) {
      const resumed = openStream(new URL("/api/events/stream", d.url).href, { "last-event-id": String(ids.at(-1) ?? 0) });
      expect(await resumed.opened).toBe(200);
      await until(() => (resumed.events.at(-1)?.id ?? 0) >= last, 60_000);
      resumed.close();
      expect([...ids, ...resumed.events.map((e) => e.id)]).toEqual(Array.from({ length: last }, (_, i) => i + 1));
    }
    // The reader that kept up was never dropped and has everything once.
    await until(() => (reader.events.at(-1)?.id ?? 0) >= last, 60_000);
    expect(reader.error()).toBeUndefined();
    expect(reader.events.map((e) => e.id)).toEqual(Array.from({ length: last }, (_, i) => i + 1));
    reader.close();
  });

  it("a client reading back a long log at its own pace is not dropped for it", async () => {
    const d = await dashboard(64 * 1024);
    for (let i = 0; i < 300; i++) await d.store.append([bulky(i, 4_000)]); // ~1.2 MB of log, 20 times the bound
    const client = openStream(new URL("/api/events/stream?after=0", d.url).href);
    expect(await client.opened).toBe(200);
    await until(() => client.events.length >= 300, 60_000);
    expect(client.error()).toBeUndefined();
    expect(client.events.map((e) => e.id)).toEqual(Array.from({ length: 300 }, (_, i) => i + 1));
    client.close();
  });

  it("500 clients at once: no MaxListenersExceededWarning, and each is served", async () => {
    const warnings: Error[] = [];
    const onWarning = (w: Error) => void warnings.push(w);
    process.on("warning", onWarning);
    try {
      const d = await dashboard();
      const clients = Array.from({ length: 500 }, () => {
        const socket = connect({ host: "127.0.0.1", port: d.port });
        sockets.push(socket);
        let text = "";
        socket.on("data", (b: Buffer) => (text += b.toString("utf8")));
        socket.write("GET /api/events/stream?after=0 HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n");
        return () => text;
      });
      await d.store.append([bulky(1, 10)]);
      const seq = await d.store.lastSeq();
      await until(() => clients.every((text) => text().includes(`id: ${seq}\n`)), 60_000);
      await server?.close(); // every stream ends with the server
      server = undefined;
    } finally {
      process.off("warning", onWarning);
    }
    expect(warnings.filter((w) => w.name === "MaxListenersExceededWarning").map((w) => w.message)).toEqual([]);
  });
});
