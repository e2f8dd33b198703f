/**
 * Issue 20 item 8: a telemetry problem costs one warning, never a run (docs/serve.md). An OTLP
 * endpoint that is not a URL turns telemetry off with one line; a collector that cannot be reached
 * is named without the credentials in its URL.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { byRole, closedPort, world as gateWorld, requestsOf, type World } from "../support/e2e.js";
import { linesOf } from "../support/hold.js";

/** The gate world, answering with a plain draft and a passing audit. */
const world = (): Promise<World> =>
  gateWorld(byRole({ executor: { content: "The answer is 4." }, challenger: { content: JSON.stringify({ concerns: [], verdict: "pass" }) } }));

vi.setConfig({ testTimeout: 60_000 });

let w: World | undefined;
afterEach(async () => {
  await w?.close();
  w = undefined;
});

describe("a bad OTLP endpoint", () => {
  it("OTEL_EXPORTER_OTLP_ENDPOINT='not a url': run --audit succeeds with one warning line", async () => {
    w = await world();
    const r = await w.run(["run", "--audit", "What is 2 + 2?"], { env: { OTEL_EXPORTER_OTLP_ENDPOINT: "not a url" } });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("The answer is 4.\n");
    const lines = linesOf(r.stderr);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^dissent: warning: telemetry is off: .*not an http\(s\) URL$/);
    expect(requestsOf(w.server, "challenger")).toHaveLength(1);
  });

  it("a collector that is down, named with user:password@ in its URL: the warning never shows the credentials", async () => {
    w = await world();
    const url = `http://dissent-user:hunter2-otlp-pw@127.0.0.1:${await closedPort()}`;
    const r = await w.run(["run", "--audit", "What is 2 + 2?"], {
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: url, OTEL_EXPORTER_OTLP_HEADERS: "x-api-key=vendor-key-123456" },
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("The answer is 4.\n");
    const lines = linesOf(r.stderr);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^dissent: warning: telemetry: sending traces to http:\/\/127\.0\.0\.1:\d+\/v1\/traces failed/);
    for (const secret of ["hunter2-otlp-pw", "dissent-user", "vendor-key-123456"]) expect(r.stderr).not.toContain(secret);
  });
});
