/**
 * An agent that edits the user's own checkout instead of its clone (docs/implement.md#safety),
 * finding it as any agent could (the objects its clone borrows lead there): under bubblewrap the
 * checkout is read-only and the write is refused; unsandboxed it is caught like one that writes under
 * `..` — the attempt fails `escaped`, nothing is committed, one error line names the path, the issue
 * goes to a person.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { gitIn, HOSTILE_AGENT, implementWorld, type ImplementWorld } from "../support/implement-world.js";

vi.setConfig({ testTimeout: 180_000 });

let w: ImplementWorld | undefined;
afterEach(async () => {
  await w?.close();
  w = undefined;
});

const events = async (world: ImplementWorld, id: string) =>
  (await world.run(["events", "--issue", id, "--json"])).stdout
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { type: string; outcome?: string; attempt?: number; final?: boolean });

describe("an agent that writes into the user's checkout", () => {
  it("unsandboxed: fails the attempt — outcome escaped, one error line naming the checkout's file, nothing committed, the issue dissent-hitl", async () => {
    w = await implementWorld({ mode: "escape-checkout", sandbox: "none" });
    const id = await w.readyIssue();
    const r = await w.run(["issue", "implement", id]);
    expect(r.code).toBe(1);
    const errors = r.stderr.split("\n").filter((l) => l.startsWith("dissent: error:"));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/wrote outside its worktree in attempt 1 .*src\/sum\.js/);
    // The user's file changed (the agent did that), and dissent saw it: nothing of the attempt was published.
    expect(gitIn(w.repo, "status", "--porcelain")).toContain("src/sum.js");
    expect(gitIn(w.repo, "branch", "--list", `dissent/issue-${id}`).trim()).toBe("");
    const log = await events(w, id);
    expect(log.find((e) => e.type === "ImplementAttempt")?.outcome).toBe("escaped");
    expect(log.some((e) => e.type === "PullRequestOpened")).toBe(false);
    const shown = JSON.parse((await w.run(["issue", "show", id, "--json"])).stdout) as { labels: string[] };
    expect(shown.labels).toContain("dissent-hitl");
  });

  it("unsandboxed, in a later attempt: the run's end is recorded as that attempt — the error line and the final ImplementFailed both name attempt 2", async () => {
    w = await implementWorld({ mode: "unused", command: `sh ${HOSTILE_AGENT}`, sandbox: "none", env: { HOSTILE_PLAN: "" } });
    const id = await w.readyIssue();
    // Attempt 1 has a plain bug (the review sends it back); attempt 2 overwrites the checkout's .env.
    const plan = join(w.dir, "hostile-plan");
    writeFileSync(plan, `${id} 1 bug\n${id} 2 ignored\n`);
    const r = await w.run(["issue", "implement", id], { env: { HOSTILE_PLAN: plan } });
    expect(r.code).toBe(1);
    expect(r.stderr.split("\n").filter((l) => l.startsWith("dissent: error:"))).toEqual([
      expect.stringMatching(/wrote outside its worktree in attempt 2 .*\.env/),
    ]);
    const log = await events(w, id);
    expect(log.filter((e) => e.type === "ImplementAttempt").map((e) => [e.attempt, e.outcome])).toEqual([
      [1, "tested"],
      [2, "escaped"],
    ]);
    expect(log.filter((e) => e.type === "ImplementFailed").map((e) => [e.attempt, e.final])).toEqual([[2, true]]);
  });

  it("under bubblewrap: the checkout is read-only to the agent — its file is as it was, and the attempt goes on to its review", async () => {
    w = await implementWorld({ mode: "escape-checkout", sandbox: "bubblewrap" });
    const id = await w.readyIssue();
    const r = await w.run(["issue", "implement", id, "--json"]);
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(w.agentLog, "utf8")).toContain("refused EROFS");
    expect(readFileSync(join(w.repo, "src", "sum.js"), "utf8")).toContain("not implemented");
    expect(gitIn(w.repo, "status", "--porcelain")).toBe("");
    expect((await events(w, id)).find((e) => e.type === "ImplementAttempt")?.outcome).toBe("tested");
    expect(gitIn(w.repo, "show", `dissent/issue-${id}:src/sum.js`)).toContain("return a + b;");
  });
});
