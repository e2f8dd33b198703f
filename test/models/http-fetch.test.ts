/**
 * The model calls' transport (src/models/http-fetch.ts: node:http with a keep-alive agent behind the SDK's `fetch`
 * option) against real servers on 127.0.0.1: what Node's fetch did for dissent, it still does —
 * replies read byte for byte and decoded (gzip, deflate, br), `max_reply_bytes` (docs/limits.md)
 * declared or counted as it arrives or inflates, a hanging server left when the call's signal
 * aborts, streamed requests streamed, redirects followed. Through the provider and the call door:
 * test/models/http-fetch-provider.test.ts.
 */
import type { ServerResponse } from "node:http";
import { brotliCompressSync, deflateSync, gzipSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { httpFetch } from "../../src/models/http-fetch.js";
import { replyTooLarge } from "../../src/models/reply-cap.js";
import { closeServers, completion, pour, serve } from "../support/plain-server.js";

afterEach(closeServers);

const MiB = 1024 * 1024;
const KEY = "sk-transport-test-0123456789abcdef";

const post = (body = '{"model":"m"}') => ({ method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${KEY}` }, body });

describe("the model transport", () => {
  it("reads a reply whole, byte for byte, with its status and headers; the key goes in its header and compressed replies are asked for", async () => {
    const body = Buffer.from(JSON.stringify({ text: "é".repeat(100_000) }));
    const { url, seen } = await serve((_req, res) => {
      res.writeHead(201, { "content-type": "application/json", "x-request-id": "r-1", "content-length": String(body.length) });
      res.end(body);
    });
    const res = await httpFetch(MiB)(`${url}/v1/chat/completions`, post());
    expect(res.status).toBe(201);
    expect(res.headers.get("x-request-id")).toBe("r-1");
    expect(Buffer.from(await res.arrayBuffer()).equals(body)).toBe(true);
    expect(seen[0]?.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(seen[0]?.headers["accept-encoding"]).toContain("gzip");
    expect(seen[0]?.body).toBe('{"model":"m"}');
  });

  it.each([
    ["gzip", gzipSync],
    ["deflate", deflateSync],
    ["br", brotliCompressSync],
  ] as const)("decodes a %s reply", async (encoding, pack) => {
    const text = completion("x".repeat(50_000));
    const packed = pack(Buffer.from(text));
    const { url } = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "application/json", "content-encoding": encoding, "content-length": String(packed.length) });
      res.end(packed);
    });
    expect(await (await httpFetch(MiB)(url, post())).text()).toBe(text);
  });

  it("a reply declaring more than the cap fails before it is read, and the connection is dropped", async () => {
    let finished: Promise<boolean> = Promise.resolve(true);
    const { url } = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "application/json", "content-length": String(64 * MiB) });
      finished = pour(res, Buffer.alloc(64 * 1024, 0x20), 64 * MiB);
    });
    const err = await httpFetch(MiB)(url, post()).catch((e: unknown) => e);
    expect(replyTooLarge(err)?.limit).toBe(MiB);
    expect(await finished).toBe(false);
  });

  it("a reply of no declared length is counted as it arrives: cut at the cap, the connection dropped", async () => {
    let finished: Promise<boolean> = Promise.resolve(true);
    const { url } = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      finished = pour(res, Buffer.alloc(64 * 1024, 0x20), 64 * MiB);
    });
    const err = await httpFetch(MiB)(url, post()).catch((e: unknown) => e);
    expect(replyTooLarge(err)?.limit).toBe(MiB);
    expect(await finished).toBe(false);
  });

  it("a gzip reply declaring a few KB that inflates to 4 MiB fails at the cap as it inflates", async () => {
    const packed = gzipSync(Buffer.alloc(4 * MiB, 0x20));
    expect(packed.length).toBeLessThan(MiB / 8);
    const { url } = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "application/json", "content-encoding": "gzip", "content-length": String(packed.length) });
      res.end(packed);
    });
    const err = await httpFetch(MiB)(url, post()).catch((e: unknown) => e);
    expect(replyTooLarge(err)?.limit).toBe(MiB);
  });

  it.each([
    ["before its headers", (_res: ServerResponse) => undefined],
    ["half way through its body", (res: ServerResponse) => res.writeHead(200, { "content-type": "application/json" }).write('{"id":"chatcmpl-t",')],
  ])("a server hanging %s is left when the call's signal aborts, and its connection is closed", async (_when, start) => {
    let closed: Promise<void> = Promise.resolve();
    let answering: () => void = () => undefined;
    const asked = new Promise<void>((r) => (answering = r));
    const { url } = await serve((req, res) => {
      start(res);
      closed = new Promise((r) => req.socket.once("close", () => r()));
      answering();
    });
    const controller = new AbortController();
    const pending = httpFetch(MiB)(url, { ...post(), signal: controller.signal }).then((r) => r.text());
    await asked;
    const reason = new Error("timed out");
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
    await closed;
  });

  it("a stream the caller asked for is handed on as it arrives, not read whole first", async () => {
    let release: () => void = () => undefined;
    const released = new Promise<void>((r) => (release = r));
    const { url } = await serve(async (_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write('data: {"choices":[{"index":0,"delta":{"content":"hi"}}]}\n\n');
      await released; // the rest only once the client has read the first event
      res.end("data: [DONE]\n\n");
    });
    const res = await httpFetch(MiB)(url, post('{"model":"m","stream":true}'));
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toContain('"hi"');
    release();
    while (!(await reader.read()).done);
  });

  it("a redirect is followed, as fetch follows it", async () => {
    const { url, seen } = await serve((req, res) => {
      if (req.url === "/old/chat/completions") {
        res.writeHead(307, { location: "/v1/chat/completions" });
        return void res.end();
      }
      res.writeHead(200, { "content-type": "application/json" });
      res.end(completion("moved"));
    });
    const res = await httpFetch(MiB)(`${url}/old/chat/completions`, post());
    expect(JSON.parse(await res.text()).choices[0].message.content).toBe("moved");
    expect(seen.map((s) => s.path)).toEqual(["/old/chat/completions", "/v1/chat/completions"]);
    expect(seen[1]?.body).toBe('{"model":"m"}');
  });
});
