import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Concern } from "../../src/contracts/concern.js";
import { ConfigError, RunError, UsageError } from "../../src/errors.js";
import { githubTracker } from "../../src/trackers/github.js";
import type { PlanReport } from "../../src/trackers/port.js";
import { startGithubDouble, type GithubDouble } from "../support/github-double.js";
import { githubConfig, rejection, trackerOn } from "./github-fixtures.js";

let gh: GithubDouble;
beforeEach(async () => {
  gh = await startGithubDouble();
  gh.addIssue({ number: 12, title: "Retry the upload", body: "Uploads fail on flaky networks.", labels: ["bug", "dissent-find"] });
  gh.addIssue({ number: 13, title: "Docs typo", body: null, labels: [] });
  gh.addIssue({ number: 14, title: "Fix retries", labels: ["dissent-plan"], pullRequest: true });
  gh.addIssue({ number: 15, title: "Old", state: "closed" });
});
afterEach(() => gh.close());

const concern = (over: Partial<Concern> = {}): Concern => ({
  id: "PLAN-RISK_SKEPTIC-001",
  phase: "plan",
  stage: "plan_council",
  raised_by: "plan.risk_skeptic",
  severity: "HIGH",
  category: "risk",
  concern: "Retries may duplicate\nuploads.",
  evidence: "",
  must_address_by: "implement",
  human_required: false,
  fingerprint: "fp1",
  raised_at: "2024-05-01T12:00:00Z",
  ...over,
});
const report = (plan: string, over: Partial<PlanReport> = {}): PlanReport => ({
  status: "ready",
  route: "load_bearing",
  plan,
  acceptanceCriteria: ["A retried upload is stored once"],
  pendingConcerns: [concern()],
  ...over,
});
const ours = (marker: string) => gh.comments.filter((c) => c.issue === 12 && c.body.startsWith(marker));

describe("GitHub tracker: issues", () => {
  it("reads an issue by number, '#12' included", async () => {
    const t = trackerOn(gh);
    expect(t.kind).toBe("github");
    expect(t.name).toBe("acme/widgets");
    for (const id of ["12", "#12"]) {
      expect(await t.get(id)).toEqual({
        id: "12",
        title: "Retry the upload",
        body: "Uploads fail on flaky networks.",
        labels: ["bug", "dissent-find"],
        url: "https://github.com/acme/widgets/issues/12",
      });
    }
    expect((await t.get("13")).body).toBe(""); // GitHub sends body: null for an empty body
  });

  it("refuses an id that is not an issue number, and a pull request", async () => {
    const t = trackerOn(gh);
    expect(UsageError.isInstance(await rejection(t.get("twelve")))).toBe(true);
    expect(UsageError.isInstance(await rejection(t.get("0")))).toBe(true);
    const e = await rejection(t.get("14"));
    expect(RunError.isInstance(e)).toBe(true);
    expect(e.message).toContain("pull request");
  });

  it("lists open issues only, not pull requests, with their labels, across pages", async () => {
    for (let n = 100; n < 230; n++) gh.addIssue({ number: n, title: `Issue ${n}`, labels: n % 2 ? ["dissent-ready"] : [] });
    const list = await trackerOn(gh).list();
    const ids = list.map((i) => Number(i.id));
    expect(ids).toHaveLength(132);
    expect(ids).toContain(12);
    expect(ids).toContain(13);
    expect(ids).not.toContain(14); // a pull request
    expect(ids).not.toContain(15); // closed
    expect(list.find((i) => i.id === "12")?.labels).toEqual(["bug", "dissent-find"]);
    expect(list.find((i) => i.id === "101")?.labels).toEqual(["dissent-ready"]);
    expect(gh.requests.filter((r) => r.path.endsWith("/issues")).length).toBe(2); // 133 open, PR included, at 100 a page
  });

  it("needs the token: a missing one is a config error naming the variable", () => {
    const missing = () => githubTracker(githubConfig(gh, { token_env: "MY_GH_TOKEN" }), { GITHUB_TOKEN: gh.token }, "dissent.config.yaml");
    expect(missing).toThrow(ConfigError);
    expect(missing).toThrow(/MY_GH_TOKEN/);
    expect(() => githubTracker(githubConfig(gh), { GITHUB_TOKEN: "" }, "dissent.config.yaml")).toThrow(/GITHUB_TOKEN/);
  });

  it("works against GitHub Enterprise's base_url (an /api/v3 path), and never shows credentials in it", async () => {
    const ghe = await startGithubDouble({ prefix: "/api/v3" });
    try {
      ghe.addIssue({ number: 7, title: "On the enterprise server", labels: ["dissent-find"] });
      const t = trackerOn(ghe);
      expect((await t.list()).map((i) => i.id)).toEqual(["7"]);
      expect(await t.setLabels("7", { add: ["dissent-plan"], remove: ["dissent-find"] })).toEqual(["dissent-plan"]);
      const withUser = ghe.url.replace("http://", "http://someone:hunter2@");
      const e = await rejection(trackerOn(ghe, { config: { base_url: withUser } }).get("7"));
      expect(e.message).toMatch(/^cannot reach GitHub at http:\/\/127\.0\.0\.1:\d+\/api\/v3 for acme\/widgets/);
      expect(e.message).not.toContain("hunter2");
    } finally {
      await ghe.close();
    }
  });

  it("refuses a write spacing knob that is not a number of milliseconds", () => {
    const env = { GITHUB_TOKEN: gh.token, DISSENT_GITHUB_WRITE_INTERVAL_MS: "fast" };
    expect(() => githubTracker(githubConfig(gh), env, "dissent.config.yaml")).toThrow(
      /DISSENT_GITHUB_WRITE_INTERVAL_MS must be a number of milliseconds, not 'fast'/,
    );
  });

  it("sends the token from token_env, and only to the configured base_url", async () => {
    await trackerOn(gh, { env: { OTHER: gh.token }, config: { token_env: "OTHER" } }).get("12");
    expect(gh.requests.every((r) => r.authorization === `token ${gh.token}`)).toBe(true);
  });
});

describe("GitHub tracker: the plan comment", () => {
  it("posts the plan, acceptance criteria and pending concerns as one comment behind a hidden marker", async () => {
    await trackerOn(gh).publishPlan("12", report("## Steps\n\n1. Add a retry with backoff."));
    const [c, ...more] = ours("<!-- dissent:plan -->");
    expect(more).toEqual([]);
    expect(c?.body).toContain("1. Add a retry with backoff.");
    expect(c?.body).toContain("- [ ] A retried upload is stored once");
    expect(c?.body).toContain("**HIGH** `PLAN-RISK_SKEPTIC-001` (plan.risk_skeptic → implement): Retries may duplicate uploads.");
    expect(c?.body).toContain("**ready**");
  });

  it("updates the same comment in place on re-plan, from this process or a later one", async () => {
    gh.comments.push({ id: 1, issue: 12, body: "> <!-- dissent:plan -->\n> quoted by a person", login: "someone", at: "2024-05-01T12:00:00Z" });
    const t = trackerOn(gh);
    await t.publishPlan("#12", report("First plan."));
    const [first] = ours("<!-- dissent:plan -->");
    await t.publishPlan("12", report("Second plan.", { status: "needs_replan" }));
    await trackerOn(gh).publishPlan("12", report("Third plan.", { pendingConcerns: [] })); // a new process finds it by the marker
    const [c, ...more] = ours("<!-- dissent:plan -->");
    expect(more).toEqual([]);
    expect(c?.id).toBe(first?.id);
    expect(c?.body).toContain("Third plan.");
    expect(c?.body).not.toContain("Second plan.");
    expect(c?.body).toContain("Pending concerns (0)");
    expect(gh.comments).toHaveLength(2); // the person's quote, and ours
    expect(gh.writes().filter((w) => w.includes("comments"))).toEqual([
      "POST /issues/12/comments",
      "PATCH /issues/comments/" + String(first?.id),
      "PATCH /issues/comments/" + String(first?.id),
    ]);
  });

  it("leaves an unchanged plan comment alone, and posts it again if it was deleted", async () => {
    const t = trackerOn(gh);
    await t.publishPlan("12", report("Same plan."));
    await trackerOn(gh).publishPlan("12", report("Same plan."));
    expect(gh.writes().filter((w) => w.includes("comments"))).toEqual(["POST /issues/12/comments"]);
    gh.comments.splice(0, gh.comments.length);
    await t.publishPlan("12", report("New plan."));
    expect(ours("<!-- dissent:plan -->").map((c) => c.body.includes("New plan."))).toEqual([true]);
  });

  it("notes the merge in a comment of its own, once, leaving the plan comment as it was", async () => {
    const t = trackerOn(gh);
    await t.publishPlan("12", report("The plan."));
    const plan = ours("<!-- dissent:plan -->")[0]?.body;
    await t.recordMerged("12", 99, [concern()]);
    await trackerOn(gh).recordMerged("12", 99, [concern()]);
    const merged = ours("<!-- dissent:merged -->");
    expect(merged).toHaveLength(1);
    expect(merged[0]?.body).toContain("merged in #99");
    expect(merged[0]?.body).toContain("`PLAN-RISK_SKEPTIC-001`");
    expect(ours("<!-- dissent:plan -->")[0]?.body).toBe(plan);
  });
});
