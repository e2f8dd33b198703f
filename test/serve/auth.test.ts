/**
 * Who may read the dashboard (docs/serve.md): loopback by default; any other address only with
 * DISSENT_SERVE_TOKEN, and then every request without the token gets 401 — the page's shell
 * included (its 401 body is the form that asks for the token, and holds no data).
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { openStream } from "./sse-client.js";
import { getJson, serve, serveWorld, type ServeWorld, type Serving } from "./world.js";

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const TOKEN = "t0ken-for-the-dashboard-test-5b1f";
let w: ServeWorld;

beforeAll(async () => {
  w = await serveWorld();
  await w.newIssue("Something to serve", "An issue so the board is not empty.", ["dissent-trivial"]);
});
afterAll(async () => {
  await w?.close();
});

describe("binding an address other than loopback", () => {
  it("refuses to start without DISSENT_SERVE_TOKEN: one line on stderr, exit 2", async () => {
    for (const host of ["0.0.0.0", "::", "192.0.2.1"]) {
      const r = await w.run(["serve", "--host", host, "--port", "0"]);
      expect(r.code, host).toBe(2);
      expect(r.stdout).toBe("");
      const lines = r.stderr.split("\n").filter(Boolean);
      expect(lines, r.stderr).toHaveLength(1);
      expect(lines[0]).toMatch(/^dissent: error: --host .* is not a loopback address: set DISSENT_SERVE_TOKEN/);
    }
  });

  it("refuses an empty token too", async () => {
    const r = await w.run(["serve", "--host", "0.0.0.0", "--port", "0"], { env: { DISSENT_SERVE_TOKEN: "  " } });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^dissent: error: DISSENT_SERVE_TOKEN is set but empty/);
  });

  it("rejects a bad --port with exit 2", async () => {
    const r = await w.run(["serve", "--port", "99999"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^dissent: error: --port must be a port number/);
  });
});

describe("with a token", () => {
  let s: Serving;
  beforeAll(async () => {
    s = await serve(w, ["--host", "0.0.0.0"], { DISSENT_SERVE_TOKEN: TOKEN });
  });
  afterAll(async () => {
    await s?.stop();
  });

  const PATHS = [
    "/",
    "/assets/app.js",
    "/assets/chart.js",
    "/api",
    "/api/issues",
    "/api/issues/1",
    "/api/events?after=0",
    "/api/events/stream",
    "/api/wiki",
    "/api/stats",
    "/api/runs",
    "/no/such/route",
    "/favicon.ico",
  ];

  it("answers every request without it with 401", async () => {
    for (const path of PATHS) {
      const r = await getJson(s.url, path);
      expect(r.status, path).toBe(401);
      expect(r.headers.get("www-authenticate"), path).toMatch(/^Bearer/);
      expect(r.text, path).not.toContain("Something to serve");
    }
  });

  it("answers a wrong token, or another scheme, with 401", async () => {
    for (const authorization of [`Bearer ${TOKEN}x`, `Bearer ${TOKEN.slice(1)}`, `Basic ${Buffer.from(`x:${TOKEN}`).toString("base64")}`, TOKEN, "Bearer"]) {
      expect((await getJson(s.url, "/api/issues", { authorization })).status, authorization).toBe(401);
    }
    const stream = openStream(new URL("/api/events/stream", s.url).href, { authorization: "Bearer nope" });
    expect(await stream.opened).toBe(401);
  });

  it("serves every route to a request that carries it", async () => {
    const auth = { authorization: `Bearer ${TOKEN}` };
    for (const path of ["/", "/assets/app.js", "/api", "/api/issues", "/api/issues/1", "/api/events?after=0", "/api/wiki", "/api/stats", "/api/runs"]) {
      expect((await getJson(s.url, path, auth)).status, path).toBe(200);
    }
    const board = await getJson<{ issues: { title: string }[] }>(s.url, "/api/issues", auth);
    expect(board.body.issues.map((i) => i.title)).toContain("Something to serve");
    const stream = openStream(new URL("/api/events/stream?after=0", s.url).href, auth);
    expect(await stream.opened).toBe(200);
    stream.close();
  });

  it("gives a browser that opens / the form that asks for the token (status 401, no data)", async () => {
    const r = await getJson(s.url, "/");
    expect(r.status).toBe(401);
    expect(r.headers.get("content-type")).toMatch(/^text\/html/);
    expect(r.text).toContain('id="token"');
    expect(r.headers.get("content-security-policy")).toMatch(/script-src 'sha256-/);
  });

  it("never prints the token", async () => {
    expect(s.stdout()).not.toContain(TOKEN);
    expect(s.stderr()).not.toContain(TOKEN);
  });
});

describe("stopping", () => {
  it("exits 130 on Ctrl-C and 143 on SIGTERM, closing open streams", async () => {
    for (const [signal, code] of [
      ["SIGINT", 130],
      ["SIGTERM", 143],
    ] as const) {
      const s = await serve(w);
      const stream = openStream(new URL("/api/events/stream", s.url).href);
      expect(await stream.opened).toBe(200);
      const started = Date.now();
      const result = await s.stop(signal);
      expect(result.code, result.stderr).toBe(code);
      await stream.ended;
      expect(stream.error()).toBeUndefined(); // the stream's response was ended, not cut
      expect(Date.now() - started).toBeLessThan(5_000);
    }
  });
});
