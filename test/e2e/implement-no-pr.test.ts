/**
 * `implement.open_pr: false` on the GitHub tracker (docs/implement.md#the-pull-request): nothing is
 * pushed and no pull request is opened; the review's body is recorded in the store and shown by
 * `issue show`, and the GitHub issue is labelled `dissent-review` all the same.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { startGithubDouble } from "../support/github-double.js";
import { gitIn, implementWorld } from "../support/implement-world.js";

vi.setConfig({ testTimeout: 180_000 });

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const x of open.splice(0).reverse()) await x.close();
});

describe("issue implement on GitHub with open_pr: false", () => {
  it("pushes nothing and opens no pull request; the review is recorded in the store and the issue labelled dissent-review", async () => {
    const w = await implementWorld({ mode: "good", implement: "  open_pr: false" });
    open.push(w);
    const gh = await startGithubDouble({ gitRepo: w.origin });
    open.push(gh);
    const config = join(w.dir, "dissent.config.yaml");
    writeFileSync(config, `${readFileSync(config, "utf8")}\ntracker: { type: github, repo: "acme/widgets", base_url: "${gh.url}" }\n`);
    gh.addIssue({ number: 1, title: "Add a sum function", body: "Implement sum(a, b) in src/sum.js so that it returns a + b; test.js checks it." });
    const env = { GITHUB_TOKEN: gh.token, DISSENT_GITHUB_WRITE_INTERVAL_MS: "0" };
    expect((await w.run(["issue", "plan", "1", "--json"], { env })).code).toBe(0);

    const r = await w.run(["issue", "implement", "1", "--json"], { env });
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { status: string; pull_request: { where: string; number: number | null } };
    expect(out.status).toBe("review");
    expect(out.pull_request).toMatchObject({ where: "store", number: null });
    expect(gh.pulls.size).toBe(0);
    expect(gh.writes().filter((x) => x.includes("/pulls"))).toEqual([]);
    expect(gitIn(w.origin, "branch", "--list")).not.toContain("dissent/");
    expect(gitIn(w.repo, "show", "dissent/issue-1:src/sum.js")).toContain("return a + b;");
    expect(gh.issues.get(1)?.labels).toContain("dissent-review");
    const shown = await w.run(["issue", "show", "1"], { env });
    expect(shown.stdout).toContain("## Implementation");
    expect(shown.stdout).toContain("branch: dissent/issue-1");
  });
});
