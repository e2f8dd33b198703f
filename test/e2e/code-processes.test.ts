/**
 * The councils that read the code under the conditions a real run meets (issue 30): one SIGTERM while
 * a council that carries code is waiting on its model stops `issue plan` with 143, and the next run
 * resumes with the same code block, byte for byte; two `issue plan` processes at once on one store and
 * one repository (the store's code index shared) both finish, each request carrying its code.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { readDataBlocks } from "../../src/prompting/data-block.js";
import { makeRepo, shopFiles, type Repo } from "../code/repos.js";
import { holdWorld, ok, type HoldWorld } from "../support/hold.js";
import type { ChatRequest } from "../support/openai-server.js";
import { until } from "../support/proc.js";

vi.setConfig({ testTimeout: 180_000 });

let w: HoldWorld | undefined;
let repo: Repo | undefined;
const releases: (() => void)[] = [];
afterEach(async () => {
  for (const r of releases.splice(0)) r();
  await w?.close();
  repo?.remove();
  w = undefined;
  repo = undefined;
});

const codeOf = (r: ChatRequest | undefined) =>
  readDataBlocks(r?.body.messages.map((m) => (typeof m.content === "string" ? m.content : "")).join("\n\n") ?? "").find((b) => b.kind === "code")?.text;
const TITLE = "Retries should keep the request id";
const BODY = "`withRetry` re-runs the HttpClient's `beforeRequest` hooks; an id set there changes on every retry of `send()`.";

describe("code-reading councils, stopped and run side by side", () => {
  it("one SIGTERM while a plan critic holding code waits on its model: exit 143, and the resumed plan sends the same code block", async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    releases.push(() => release());
    let held = true;
    repo = makeRepo(shopFiles());
    w = await holdWorld(
      { "plan.risk_skeptic": async () => (held ? (await gate, { content: '{"findings": []}' }) : { content: '{"findings": []}' }) },
      { extra: `project:\n  repo: ${JSON.stringify(repo.root)}\n` },
    );
    const id = await w.newIssue(TITLE, BODY, ["dissent-load-bearing"]);
    const p = w.start(["issue", "plan", id]);
    await until(() => (w as HoldWorld).requestsOf("plan.risk_skeptic").length > 0, 120_000);
    const before = codeOf(w.requestsOf("plan.risk_skeptic")[0]);
    expect(before).toContain("### src/http/retry.ts:");
    p.child.kill("SIGTERM");
    const r = await p.done;
    expect(r.code, r.stderr).toBe(143);
    held = false;
    release();
    const again = JSON.parse(ok(await w.run(["issue", "plan", id, "--json"]), "resumed plan").stdout) as { status: string };
    expect(again.status).toBe("ready");
    const asked = w.requestsOf("plan.risk_skeptic");
    expect(asked.length).toBeGreaterThan(1);
    expect(codeOf(asked[asked.length - 1])).toBe(before);
  });

  it("two issue plan processes at once on one store and one repository both finish, every council request with its code", async () => {
    repo = makeRepo(shopFiles());
    w = await holdWorld({}, { extra: `project:\n  repo: ${JSON.stringify(repo.root)}\n` });
    const a = await w.newIssue(TITLE, BODY, ["dissent-load-bearing"]);
    const b = await w.newIssue("Format cents in checkout errors", "`checkout` should show `formatCents(totalCents)` in its error.", ["dissent-load-bearing"]);
    const [ra, rb] = await Promise.all([w.run(["issue", "plan", a, "--json"]), w.run(["issue", "plan", b, "--json"])]);
    for (const r of [ra, rb]) expect((JSON.parse(ok(r, "plan").stdout) as { status: string }).status).toBe("ready");
    const critics = w.requestsOf("plan.builder");
    expect(critics).toHaveLength(2);
    const blocks = critics.map(codeOf);
    expect(blocks.find((c) => c?.includes("### src/http/retry.ts:"))).toBeDefined();
    expect(blocks.find((c) => c?.includes("### src/util/format.ts:"))).toBeDefined();
  });
});
