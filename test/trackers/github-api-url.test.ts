import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ConfigError } from "../../src/errors.js";
import { githubTracker, isGithubTracker } from "../../src/trackers/github.js";
import { closedPort } from "../support/e2e.js";
import { startGithubDouble, type GithubDouble } from "../support/github-double.js";
import { FAST, githubConfig, rejection } from "./github-fixtures.js";

// The GitHub tracker finds the API of an Actions run by GITHUB_API_URL when the config names no
// base_url (GitHub Enterprise Server: https://host/api/v3), and base_url wins when it does
// (docs/github-action.md#github-enterprise-server). The double serves under /api/v3, as GHES does.
let gh: GithubDouble;
beforeEach(async () => {
  gh = await startGithubDouble({ prefix: "/api/v3" });
  gh.addIssue({ number: 12, title: "Retry the upload", body: "Uploads fail on flaky networks.", labels: [] });
});
afterEach(() => gh.close());

const noBaseUrl = { type: "github" as const, repo: "acme/widgets", token_env: "GITHUB_TOKEN" };

describe("GITHUB_API_URL", () => {
  it("names the API when the config has no base_url", async () => {
    const t = githubTracker(noBaseUrl, { GITHUB_TOKEN: gh.token, GITHUB_API_URL: gh.url }, "dissent.config.yaml", FAST);
    expect((await t.get("12")).title).toBe("Retry the upload");
    expect(gh.requests.map((r) => `${r.method} ${r.path}`)).toEqual(["GET /repos/acme/widgets/issues/12"]);
  });

  it("gives way to tracker.base_url", async () => {
    const t = githubTracker(
      githubConfig(gh),
      { GITHUB_TOKEN: gh.token, GITHUB_API_URL: `http://127.0.0.1:${await closedPort()}` },
      "dissent.config.yaml",
      FAST,
    );
    expect((await t.get("12")).title).toBe("Retry the upload");
  });

  it("when it is not an http(s) URL: a configuration error naming it, before any request", () => {
    expect(() => githubTracker(noBaseUrl, { GITHUB_TOKEN: gh.token, GITHUB_API_URL: "api.github.com" }, "dissent.config.yaml", FAST)).toThrow(
      new ConfigError("GITHUB_API_URL must be the API's http(s) URL, not 'api.github.com'"),
    );
    expect(gh.requests).toEqual([]);
  });

  it("an unreachable one is named in the error as the server tried, like a base_url", async () => {
    const url = `http://127.0.0.1:${await closedPort()}/api/v3`;
    const t = githubTracker(noBaseUrl, { GITHUB_TOKEN: gh.token, GITHUB_API_URL: url }, "dissent.config.yaml", { ...FAST, requestTimeoutMs: 2_000 });
    const e = await rejection(t.get("12"));
    expect(e.message).toContain(`cannot reach GitHub at ${url} for acme/widgets while reading issue #12`);
  });

  it("the plan comment's address: null before there is one, the comment's own page after", async () => {
    const t = githubTracker(noBaseUrl, { GITHUB_TOKEN: gh.token, GITHUB_API_URL: gh.url }, "dissent.config.yaml", FAST);
    if (!isGithubTracker(t)) throw new Error("not the GitHub tracker");
    expect(await t.planUrl("12")).toBeNull();
    await t.publishPlan("12", { status: "ready", route: "trivial", plan: "# Plan\n\nRetry.", acceptanceCriteria: [], pendingConcerns: [] });
    const comment = gh.comments.find((c) => c.issue === 12);
    expect(await t.planUrl("12")).toBe(`https://github.com/acme/widgets/issues/12#issuecomment-${comment?.id}`);
    // A fresh process finds it by its marker.
    const again = githubTracker(noBaseUrl, { GITHUB_TOKEN: gh.token, GITHUB_API_URL: gh.url }, "dissent.config.yaml", FAST);
    expect(isGithubTracker(again) && (await again.planUrl("12"))).toBe(`https://github.com/acme/widgets/issues/12#issuecomment-${comment?.id}`);
  });
});
