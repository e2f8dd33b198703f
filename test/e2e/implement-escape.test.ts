/**
 * An agent that edits the user's own checkout instead of its worktree (docs/implement.md#safety) is
 * caught like one that writes under `..`: the attempt fails `escaped`, nothing is committed, one
 * error line names the path, the issue goes to a person.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { gitIn, implementWorld, type ImplementWorld } from "../support/implement-world.js";

vi.setConfig({ testTimeout: 180_000 });

let w: ImplementWorld | undefined;
afterEach(async () => {
  await w?.close();
  w = undefined;
});

describe("an agent that writes into the user's checkout", () => {
  it("fails the attempt: outcome escaped, one error line naming the checkout's file, nothing committed, the issue dissent-hitl", async () => {
    w = await implementWorld({ mode: "escape-checkout" });
    const id = await w.readyIssue();
    const main = gitIn(w.repo, "rev-parse", "main").trim();
    const r = await w.run(["issue", "implement", id]);
    expect(r.code).toBe(1);
    const errors = r.stderr.split("\n").filter((l) => l.startsWith("dissent: error:"));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/wrote outside its worktree in attempt 1 .*src\/sum\.js/);
    // The user's file changed (the agent did that), and dissent saw it: nothing of the attempt was committed.
    expect(gitIn(w.repo, "status", "--porcelain")).toContain("src/sum.js");
    expect(gitIn(w.repo, "rev-parse", `dissent/issue-${id}`).trim()).toBe(main);
    const log = (await w.run(["events", "--issue", id, "--json"])).stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { type: string; outcome?: string });
    expect(log.find((e) => e.type === "ImplementAttempt")?.outcome).toBe("escaped");
    expect(log.some((e) => e.type === "PullRequestOpened")).toBe(false);
    const shown = JSON.parse((await w.run(["issue", "show", id, "--json"])).stdout) as { labels: string[] };
    expect(shown.labels).toContain("dissent-hitl");
  });
});
