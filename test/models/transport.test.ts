import { APICallError } from "@ai-sdk/provider";
import { describe, expect, it } from "vitest";
import { classify, FALLBACK, RETRYABLE, retryAfterMs } from "../../src/models/transport.js";

function apiError(
  statusCode: number | undefined,
  opts: { body?: string; headers?: Record<string, string>; message?: string; cause?: unknown; isRetryable?: boolean } = {},
) {
  return new APICallError({
    message: opts.message ?? `status ${statusCode}`,
    url: "http://127.0.0.1:1/v1/chat/completions",
    requestBodyValues: {},
    ...(statusCode !== undefined ? { statusCode } : {}),
    ...(opts.headers ? { responseHeaders: opts.headers } : {}),
    ...(opts.body !== undefined ? { responseBody: opts.body } : {}),
    ...(opts.cause !== undefined ? { cause: opts.cause } : {}),
    ...(opts.isRetryable !== undefined ? { isRetryable: opts.isRetryable } : {}),
  });
}

function networkError(code: string) {
  const cause = Object.assign(new Error(`connect ${code} 127.0.0.1:1`), { code });
  return new TypeError("fetch failed", { cause });
}

describe("retryAfterMs", () => {
  it("reads Retry-After in seconds", () => {
    expect(retryAfterMs({ "retry-after": "2" })).toBe(2000);
    expect(retryAfterMs({ "retry-after": "0.5" })).toBe(500);
  });

  it("reads Retry-After as an HTTP date", () => {
    const now = Date.parse("2026-01-01T00:00:00Z");
    expect(retryAfterMs({ "retry-after": "Thu, 01 Jan 2026 00:00:03 GMT" }, now)).toBe(3000);
    expect(retryAfterMs({ "retry-after": "Wed, 31 Dec 2025 23:59:00 GMT" }, now)).toBe(0);
  });

  it("prefers retry-after-ms", () => {
    expect(retryAfterMs({ "retry-after-ms": "150", "retry-after": "9" })).toBe(150);
  });

  it("matches header names case-insensitively", () => {
    expect(retryAfterMs({ "Retry-After": "1" })).toBe(1000);
  });

  it("is undefined when absent or unreadable", () => {
    expect(retryAfterMs(undefined)).toBeUndefined();
    expect(retryAfterMs({})).toBeUndefined();
    expect(retryAfterMs({ "retry-after": "soon" })).toBeUndefined();
  });
});

describe("classify (docs/configuration.md: what is retried, what falls back)", () => {
  it("a timed-out attempt is a timeout, retried and falling back", () => {
    const c = classify(new DOMException("The operation was aborted due to timeout", "TimeoutError"), true);
    expect(c.kind).toBe("timeout");
    expect(RETRYABLE.has(c.kind) && FALLBACK.has(c.kind)).toBe(true);
  });

  it.each(["ECONNREFUSED", "ECONNRESET", "ENOTFOUND", "EAI_AGAIN"])("%s is unreachable, retried and falling back", (code) => {
    const c = classify(networkError(code), false);
    expect(c.kind).toBe("unreachable");
    expect(RETRYABLE.has(c.kind) && FALLBACK.has(c.kind)).toBe(true);
  });

  it("finds the network code through an APICallError's cause", () => {
    expect(classify(apiError(undefined, { message: "Cannot connect to API", cause: networkError("ECONNREFUSED"), isRetryable: true }), false).kind).toBe(
      "unreachable",
    );
  });

  it.each([500, 502, 503, 504])("HTTP %i is a server error, retried and falling back", (status) => {
    const c = classify(apiError(status), false);
    expect(c).toMatchObject({ kind: "server", status });
    expect(RETRYABLE.has(c.kind) && FALLBACK.has(c.kind)).toBe(true);
  });

  it("HTTP 429 is rate limited: retried honouring Retry-After, but not a reason to fall back", () => {
    const c = classify(apiError(429, { headers: { "retry-after": "3" } }), false);
    expect(c).toMatchObject({ kind: "rate_limited", status: 429, retryAfterMs: 3000 });
    expect(RETRYABLE.has(c.kind)).toBe(true);
    expect(FALLBACK.has(c.kind)).toBe(false);
  });

  it("HTTP 429 about quota is an auth failure, never retried", () => {
    const c = classify(apiError(429, { body: '{"error":{"code":"insufficient_quota","message":"You exceeded your current quota"}}' }), false);
    expect(c.kind).toBe("auth");
    expect(RETRYABLE.has(c.kind)).toBe(false);
  });

  it.each([401, 403])("HTTP %i is an auth failure, neither retried nor falling back", (status) => {
    const c = classify(apiError(status), false);
    expect(c).toMatchObject({ kind: "auth", status });
    expect(RETRYABLE.has(c.kind) || FALLBACK.has(c.kind)).toBe(false);
  });

  it.each([400, 404, 422])("HTTP %i is fatal: not retried", (status) => {
    const c = classify(apiError(status), false);
    expect(c.kind).toBe("fatal");
    expect(RETRYABLE.has(c.kind) || FALLBACK.has(c.kind)).toBe(false);
  });

  it("a 5xx carries its Retry-After", () => {
    expect(classify(apiError(503, { headers: { "retry-after": "1" } }), false).retryAfterMs).toBe(1000);
  });

  it("an arbitrary error is fatal, with its message as detail", () => {
    expect(classify(new Error("boom"), false)).toEqual({ kind: "fatal", detail: "boom" });
  });
});
