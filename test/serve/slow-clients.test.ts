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
import { readText, serve, serveWorld } from "./world.js";

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

/** A dashboard over a fresh embedded store; `bufferBytes` lowers the per-client budget so the test stays small. */
async function dashboard(o: { bufferBytes?: number; maxClients?: number } = {}): Promise<{ url: string; port: number; store: Store }> {
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
    ...(o.bufferBytes ? { bufferBytes: o.bufferBytes } : {}),
    ...(o.maxClients ? { maxClients: o.maxClients } : {}),
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
    const d = await dashboard({ bufferBytes: 64 * 1024 });
    for (let i = 0; i < 300; i++) await d.store.append([bulky(i, 4_000)]); // ~1.2 MB of log, 20 times the bound
    const client = openStream(new URL("/api/events/stream?after=0", d.url).href);
    expect(await client.opened).toBe(200);
    await until(() => client.events.length >= 300, 60_000);
    expect(client.error()).toBeUndefined();
    expect(client.events.map((e) => e.id)).toEqual(Array.from({ length: 300 }, (_, i) => i + 1));
    client.close();
  });

  it("a slow reader working through an event far larger than its budget is not taken for one that reads nothing", async () => {
    const d = await dashboard({ bufferBytes: 64 * 1024 });
    await d.store.append([bulky(1, 8_000_000)]); // one 8 MB event (a reply kept with log_content can be that big)
    await d.store.append([bulky(2, 100)]);
    const last = await d.store.lastSeq();
    // A reader on a slow link: it takes what the socket holds, then waits 50 ms, again and again (a few MB/s at most).
    const socket = connect({ host: "127.0.0.1", port: d.port });
    sockets.push(socket);
    let text = "";
    socket.on("data", (b: Buffer) => {
      text += b.toString("latin1");
      socket.pause();
      setTimeout(() => socket.resume(), 50);
    });
    const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
    socket.write("GET /api/events/stream?after=0 HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n");
    await until(() => text.includes(`\nid: ${last}\n\n`) || socket.destroyed, 120_000);
    expect(text).toContain(`\nid: ${last}\n\n`); // both events arrived whole, and the stream is still up
    expect(server?.dashboard.streams()).toMatchObject({ open: 1, dropped: 0 });
    socket.destroy();
    await closed;
  });

  it("150 clients resuming from the start of a long log that never read: the server answers meanwhile, drops every one of them and frees its slot", async () => {
    // Issue 32: each stalled resumer used to hold a page of 1,000 events (and whatever it had queued) for good.
    const d = await dashboard({ bufferBytes: 64 * 1024 });
    for (let i = 0; i < 40; i++) await d.store.append(Array.from({ length: 10 }, (_, k) => bulky(i * 10 + k, 20_000))); // 400 events, 8 MB
    const last = await d.store.lastSeq();
    const streams = () => server?.dashboard.streams() ?? { open: 0, opened: 0, dropped: 0 };
    const stalled = Array.from({ length: 150 }, () => stalledClient(d.port));

    // While they hang, the server answers: its API, and a client that does read back the whole log.
    const api = await fetch(new URL("/api/events?limit=1", d.url));
    expect(api.status).toBe(200);
    const reader = openStream(new URL("/api/events/stream?after=0", d.url).href);
    expect(await reader.opened).toBe(200);
    await until(() => (reader.events.at(-1)?.id ?? 0) >= last, 60_000);
    expect(reader.events.map((e) => e.id)).toEqual(Array.from({ length: last }, (_, i) => i + 1));

    // Every stalled one is let go by the server (none of them hung up), its slot freed; the reader stays.
    await until(() => streams().opened === 151 && streams().open === 1, 60_000);
    expect(streams().dropped).toBe(150);
    expect(reader.error()).toBeUndefined();
    // Each had taken only what the socket buffers hold when it was dropped, never the 8 MB log it asked for.
    const got = await Promise.all(stalled.map((s) => drain(s.socket, s.closed)));
    for (const ids of got) expect(ids.length).toBeLessThan(last);
    reader.close();
  });

  it("past serve.max_clients a stream is refused with 503 naming the setting; when a client leaves, the next one gets in", async () => {
    const d = await dashboard({ maxClients: 3 });
    const open = Array.from({ length: 3 }, () => openStream(new URL("/api/events/stream", d.url).href));
    for (const c of open) expect(await c.opened).toBe(200);
    const refused = await fetch(new URL("/api/events/stream", d.url), { headers: { accept: "text/event-stream" } });
    expect(refused.status).toBe(503);
    expect(refused.headers.get("retry-after")).toBe("5");
    expect(((await refused.json()) as { error: string }).error).toContain("serve.max_clients");
    // The rest of the API is not counted against it.
    expect((await fetch(new URL("/api/issues", d.url))).status).toBe(200);
    open[0]?.close();
    await until(() => server?.dashboard.streams().open === 2, 30_000);
    const next = openStream(new URL("/api/events/stream", d.url).href);
    expect(await next.opened).toBe(200);
    for (const c of [...open, next]) c.close();
  });

  it("500 clients at once: no MaxListenersExceededWarning, and each is served", async () => {
    const warnings: Error[] = [];
    const onWarning = (w: Error) => void warnings.push(w);
    process.on("warning", onWarning);
    try {
      const d = await dashboard({ maxClients: 500 });
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

describe("the stream's bounds come from the config (serve:)", () => {
  it("serve.max_clients is read by dissent serve (one client more is refused); a value out of range is one line naming the key, exit 2", async () => {
    const w = await serveWorld({ extraConfig: "serve: { max_clients: 1, client_buffer_bytes: 65536 }" });
    try {
      await w.newIssue("Warm up the store", "So the store exists.", ["dissent-trivial"]);
      const s = await serve(w);
      try {
        const first = openStream(new URL("/api/events/stream", s.url).href);
        expect(await first.opened).toBe(200);
        const second = await fetch(new URL("/api/events/stream", s.url));
        expect(second.status).toBe(503);
        expect(((await second.json()) as { error: string }).error).toContain("1 live clients");
        first.close();
      } finally {
        await s.stop();
      }
      w.write("dissent.config.yaml", `${readText(join(w.dir, "dissent.config.yaml"))}\n`.replace("max_clients: 1", "max_clients: 0"));
      const bad = await w.run(["serve", "--port", "0"]);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toMatch(/^dissent: error: .*serve\.max_clients/m);
    } finally {
      await w.close();
    }
  });
});
