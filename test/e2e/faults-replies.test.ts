/**
 * Issue 20 item 3, through the built CLI: a reply is read with a byte cap (`max_reply_bytes`,
 * default 8 MiB) while it arrives, streamed or not. Beyond it the call fails as reply_too_large —
 * the connection is dropped, nothing is printed or cached, and the error names the setting.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { dissent, scratch } from "../support/cli.js";
import { CHAL_MODEL, configYaml, errorLine, EXEC_MODEL } from "../support/e2e.js";
import { startFaultServer, type FaultServer, type Schedule } from "../support/fault-server.js";

vi.setConfig({ testTimeout: 90_000 });

const MiB = 1024 * 1024;
const PASS = JSON.stringify({ concerns: [], verdict: "pass" });

let server: FaultServer | undefined;
let dir: ReturnType<typeof scratch> | undefined;
afterEach(async () => {
  await server?.close();
  dir?.cleanup();
  server = undefined;
  dir = undefined;
});

/** A world: the fault server answering the executor and the challenger, a config pointing at it. */
async function world(schedule: Schedule, extra = "") {
  server = await startFaultServer((req) => (req.body.model === CHAL_MODEL ? PASS : "The answer is 4."), schedule);
  dir = scratch("dissent-replies-");
  dir.write("dissent.config.yaml", configYaml({ url: server.url, extra }));
  const home = `${dir.dir}/home`;
  const where = dir.dir;
  return (args: string[]) => dissent(args, { cwd: where, env: { DISSENT_HOME: home }, timeoutMs: 60_000 });
}

const executor = (req: { body: { model: string } }) => req.body.model === EXEC_MODEL;

describe("max_reply_bytes", () => {
  it("a 40 MB reply is cut at 8 MiB: exit 1, one line naming the setting, nothing printed, the connection dropped, nothing cached", async () => {
    let huge = true;
    const run = await world((req) => (executor(req) && huge ? { kind: "huge", bytes: 40 * MiB } : undefined));
    const r = await run(["run", "--json", "What is 2 + 2?"]);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stdout).toBe("");
    const line = errorLine(r);
    expect(line).toMatch(/larger than 8 MiB/);
    expect(line).toContain("max_reply_bytes");
    // Not retried (the same request gets the same reply): one request, and it was not read to its end.
    expect(server?.requests).toHaveLength(1);
    const sent = server?.huge[0];
    expect(sent?.finished).toBe(false);
    expect(sent?.sent ?? Number.POSITIVE_INFINITY).toBeLessThan(32 * MiB);

    // Nothing was cached: the same run asks again, and gets the server's ordinary answer now.
    huge = false;
    const again = await run(["run", "What is 2 + 2?"]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toBe("The answer is 4.\n");
    expect(server?.requests).toHaveLength(2);
  });

  it("a provider's own max_reply_bytes holds for a streamed (SSE) reply too, and the error names that setting", async () => {
    const run = await world((req) => (executor(req) ? { kind: "huge", bytes: 40 * MiB, sse: true } : undefined), "");
    // The provider line gets its own, smaller cap.
    const { readFileSync, writeFileSync } = await import("node:fs");
    const file = `${dir?.dir}/dissent.config.yaml`;
    writeFileSync(file, readFileSync(file, "utf8").replace(/base_url: "([^"]+)" }/, 'base_url: "$1", max_reply_bytes: 1048576 }'));
    const r = await run(["run", "What is 2 + 2?"]);
    expect(r.code, r.stderr).toBe(1);
    const line = errorLine(r);
    expect(line).toMatch(/larger than 1 MiB/);
    expect(line).toContain("providers.local.max_reply_bytes");
    expect(server?.huge[0]?.finished).toBe(false);
    expect(server?.huge[0]?.sent ?? Number.POSITIVE_INFINITY).toBeLessThan(32 * MiB);
  });

  it("a huge challenger reply fails the challenger open, visibly: the draft, exit 0, challenger_error naming the setting", async () => {
    const run = await world((req) => (req.body.model === CHAL_MODEL ? { kind: "huge", bytes: 20 * MiB } : undefined));
    const r = await run(["run", "--audit", "--json", "What is 2 + 2?"]);
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { final_output: string; audit_meta: { challenger_status: string; challenger_error?: string } };
    expect(out.final_output).toBe("The answer is 4.");
    expect(out.audit_meta.challenger_status).toBe("failed");
    expect(out.audit_meta.challenger_error).toContain("max_reply_bytes");
    expect(server?.huge[0]?.finished).toBe(false);
  });

  it("doctor's JSON-mode probe reads no further than the cap either", async () => {
    const run = await world(() => ({ kind: "huge", bytes: 40 * MiB }));
    const r = await run(["doctor", "--json"]);
    expect(r.code, r.stderr).toBe(1);
    const rows = (JSON.parse(r.stdout) as { routes: { ok: boolean; detail: string }[] }).routes;
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) expect(row).toMatchObject({ ok: false, detail: expect.stringContaining("max_reply_bytes") });
    for (const h of server?.huge ?? []) expect(h.finished).toBe(false);
  });
});
