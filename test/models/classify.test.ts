/**
 * Issue #9 defect 8: a connection reset mid-body reaches `classify` as the AI SDK's APICallError
 * with the `statusCode: 200` the answer started with, the socket error only in its cause chain.
 * It must be read as the network failure it is (retried, then falling back), never as an HTTP
 * answer, while a real 400 stays a failure that is not retried.
 *
 * The errors are the SDK's own: a model made the way src/models/providers.ts makes it, asked the
 * way src/models/call.ts asks it, against a server on 127.0.0.1 that cuts its answer off.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { APICallError } from "@ai-sdk/provider";
import { generateText } from "ai";
import { afterEach, describe, expect, it } from "vitest";
import { sseTolerantFetch } from "../../src/models/sse-fetch.js";
import { classify, FALLBACK, RETRYABLE } from "../../src/models/transport.js";

type Ending = "close" | "reset" | "bad_request";

const servers: http.Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise<void>((r) => s.close(() => r()));
});

/**
 * A chat-completions server that starts a 200 and cuts it off mid-body (a FIN or an RST), or answers
 * a plain 400. The cut waits for `headersRead`: the client has the 200 in hand before its connection goes.
 */
async function server(ending: Ending, headersRead: Promise<void>): Promise<string> {
  const s = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      if (ending === "bad_request") {
        res.writeHead(400, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { message: "Unrecognized request argument supplied: seed", type: "invalid_request_error" } }));
        return;
      }
      res.writeHead(200, { "content-type": "application/json", "content-length": "4096" });
      res.write(
        '{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"# Plan\\n\\nStep one retr',
      );
      void headersRead.then(() => (ending === "reset" ? req.socket.resetAndDestroy() : req.socket.destroy()));
    });
  });
  servers.push(s);
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", () => r()));
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}/v1`;
}

/** What the SDK throws for one call, made as dissent makes it (openai-compatible, our fetch, no SDK retries). */
async function sdkError(ending: Ending): Promise<unknown> {
  let read!: () => void;
  const headersRead = new Promise<void>((r) => (read = r));
  // dissent's own fetch, telling the server when the response (status and headers) has arrived.
  const fetch: typeof globalThis.fetch = async (input, init) => {
    const res = await sseTolerantFetch(input, init);
    read();
    return res;
  };
  const model = createOpenAICompatible({ name: "local", baseURL: await server(ending, headersRead), fetch, includeUsage: true }).chatModel("m");
  try {
    await generateText({ model, system: "You plan.", prompt: "Add retries to the client.", temperature: 0, seed: 1, maxRetries: 0 });
  } catch (e) {
    return e;
  }
  throw new Error(`the ${ending} server's answer did not fail`);
}

/** The `code`s and messages down an error's cause chain. */
function chain(e: unknown): { code?: unknown; message?: unknown }[] {
  const out: { code?: unknown; message?: unknown }[] = [];
  for (let c = e as { code?: unknown; message?: unknown; cause?: unknown } | undefined; c && typeof c === "object" && out.length < 8; c = c.cause as typeof c) {
    out.push({ code: c.code, message: c.message });
  }
  return out;
}

/** The answer the SDK wraps a body that failed to read in (provider-utils `postToApi`), without its network re-wrap: `isRetryable` is then false, as for any 200. */
function cutOffAfter200(socketError: Error): APICallError {
  return new APICallError({
    message: "Failed to process successful response",
    url: "http://127.0.0.1:1/v1/chat/completions",
    requestBodyValues: {},
    statusCode: 200,
    responseHeaders: { "content-type": "application/json" },
    cause: new TypeError("terminated", { cause: socketError }),
  });
}

const retriedAndFallsBack = (kind: string) => ({ retried: RETRYABLE.has(kind as never), fallsBack: FALLBACK.has(kind as never) });

describe("classify: a body cut off after a 200 is a network failure, not an HTTP answer (issue #9 defect 8)", () => {
  it("the SDK's error for a socket closed mid-body (statusCode 200, UND_ERR_SOCKET 'other side closed' in its causes) is unreachable: retried and falling back", async () => {
    const e = await sdkError("close");
    // The shape the defect was about: the SDK's APICallError carrying the 200, the socket error only underneath.
    expect(APICallError.isInstance(e)).toBe(true);
    expect((e as APICallError).statusCode).toBe(200);
    expect(chain(e)).toContainEqual({ code: "UND_ERR_SOCKET", message: "other side closed" });

    const c = classify(e, false);
    expect(c.kind).toBe("unreachable");
    expect(retriedAndFallsBack(c.kind)).toEqual({ retried: true, fallsBack: true });
    expect(c.detail).toContain("UND_ERR_SOCKET");
  });

  it("the SDK's error for a connection reset mid-body (statusCode 200, ECONNRESET in its causes) is unreachable: retried and falling back", async () => {
    const e = await sdkError("reset");
    expect(APICallError.isInstance(e)).toBe(true);
    expect((e as APICallError).statusCode).toBe(200);
    expect(chain(e).map((x) => x.code)).toContain("ECONNRESET");

    const c = classify(e, false);
    expect(c.kind).toBe("unreachable");
    expect(retriedAndFallsBack(c.kind)).toEqual({ retried: true, fallsBack: true });
    expect(c.detail).toContain("ECONNRESET");
  });

  it.each([
    ["UND_ERR_SOCKET", Object.assign(new Error("other side closed"), { name: "SocketError", code: "UND_ERR_SOCKET" })],
    ["ECONNRESET", Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET", errno: -104, syscall: "read" })],
  ])(
    "a 200 APICallError the SDK did not mark retryable, %s two causes down, is still unreachable: the cause chain decides, not isRetryable",
    (code, socketError) => {
      const e = cutOffAfter200(socketError);
      expect(e.isRetryable).toBe(false);
      const c = classify(e, false);
      expect(c.kind).toBe("unreachable");
      expect(retriedAndFallsBack(c.kind)).toEqual({ retried: true, fallsBack: true });
      expect(c.detail).toContain(code);
    },
  );

  it("the SDK's error for a genuine 400 answer stays fatal: neither retried nor falling back", async () => {
    const e = await sdkError("bad_request");
    expect(APICallError.isInstance(e)).toBe(true);
    expect((e as APICallError).statusCode).toBe(400);

    const c = classify(e, false);
    expect(c).toMatchObject({ kind: "fatal", status: 400 });
    expect(retriedAndFallsBack(c.kind)).toEqual({ retried: false, fallsBack: false });
    expect(c.detail).toContain("Unrecognized request argument");
  });
});

describe("classify: an HTTP error whose message only looks like a cut-off", () => {
  it.each([
    [401, "auth"],
    [400, "fatal"],
  ] as const)("a %i answer whose message is 'terminated' stays %s (the server's words, not a dropped connection)", (status, kind) => {
    const e = Object.assign(new Error("terminated"), { statusCode: status, responseBody: '{"error":{"message":"terminated"}}', isRetryable: false });
    expect(classify(e, false).kind).toBe(kind);
  });
});
