/**
 * `max_reply_bytes` (docs/limits.md) through Node's fetch and a real server on 127.0.0.1: a reply of
 * declared length within the cap is read as sent; one declared beyond it fails before a byte is read;
 * a compressed one that inflates past the cap fails as it inflates, whatever length it declared.
 */
import { createServer, type Server } from "node:http";
import { gzipSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { cappedFetch, replyTooLarge } from "../../src/models/reply-cap.js";

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
});

/** A server answering every request with `body` and `headers`. */
async function serve(body: Buffer, headers: Record<string, string>): Promise<string> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "application/json", "content-length": String(body.length), ...headers });
    res.end(body);
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
}

const MiB = 1024 * 1024;

describe("the reply cap", () => {
  it("a reply of declared length within the cap is read whole, byte for byte", async () => {
    const body = Buffer.from(JSON.stringify({ text: "é".repeat(100_000) }));
    const res = await cappedFetch(MiB)(await serve(body, {}));
    expect(Buffer.from(await res.arrayBuffer()).equals(body)).toBe(true);
  });

  it("a reply declaring more than the cap fails before it is read", async () => {
    const url = await serve(Buffer.alloc(2 * MiB, 0x20), {});
    const err = await cappedFetch(MiB)(url).catch((e: unknown) => e);
    expect(replyTooLarge(err)?.limit).toBe(MiB);
  });

  it("a gzip reply declaring a few KB that inflates to 4 MiB fails at the cap as it inflates", async () => {
    const packed = gzipSync(Buffer.alloc(4 * MiB, 0x20));
    expect(packed.length).toBeLessThan(MiB / 8);
    const res = await cappedFetch(MiB)(await serve(packed, { "content-encoding": "gzip" }));
    const err = await res.text().catch((e: unknown) => e);
    expect(replyTooLarge(err)?.limit).toBe(MiB);
  });
});
