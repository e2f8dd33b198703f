import { exitCodeOf } from "../../src/cli/exit-codes.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { RunError } from "../../src/errors.js";
import { rateLimited, secondaryRateLimited, startGithubDouble, type GithubDouble } from "../support/github-double.js";
import { rejection, trackerOn } from "./github-fixtures.js";

const TOKEN = "ghp_testTOKEN1234567890";
let gh: GithubDouble;
beforeEach(async () => {
  gh = await startGithubDouble({ token: TOKEN });
  gh.addIssue({ number: 12, title: "Retry the upload", labels: ["dissent-find"] });
});
afterEach(() => gh.close());

/** The failure of `get("12")`, checked for what every GitHub error must be: one line, exit 1, no token. */
async function failure(p: Promise<unknown>, secret = TOKEN): Promise<string> {
  const e = await rejection(p);
  expect(RunError.isInstance(e), `${e.name}: ${e.message}`).toBe(true);
  expect(exitCodeOf(e)).toBe(1);
  expect(e.message).not.toContain("\n");
  expect(e.message).toContain("acme/widgets");
  expect(`${e.message} ${e.stack ?? ""} ${JSON.stringify(e)}`).not.toContain(secret);
  return e.message;
}
const issueReads = () => gh.requests.filter((r) => r.path === "/repos/acme/widgets/issues/12").length;

describe("GitHub tracker: failures are one line naming the repo and what to do", () => {
  it("401: a bad token names its variable, never its value, and is not retried", async () => {
    const message = await failure(
      trackerOn(gh, { env: { GH_PAT: "ghp_wrongTOKEN0987654321" }, config: { token_env: "GH_PAT" } }).get("12"),
      "ghp_wrongTOKEN0987654321",
    );
    expect(message).toBe(
      "GitHub rejected the token in GH_PAT (401) for acme/widgets while reading issue #12: check the token; it may be mistyped, revoked or expired",
    );
    expect(issueReads()).toBe(1);
  });

  it("403 without a rate limit: no access, with what GitHub said (redacted) and what to do", async () => {
    gh.fail({
      status: 403,
      times: Infinity,
      body: { message: `Resource not accessible by personal access token ${TOKEN}`, documentation_url: "https://docs.github.com/rest" },
    });
    const message = await failure(trackerOn(gh).get("12"));
    expect(message).toMatch(
      /^GitHub denied access \(403\) to acme\/widgets while reading issue #12 \(GitHub: Resource not accessible by personal access token \[redacted\]\)/,
    );
    expect(message).toContain("give the token in GITHUB_TOKEN read and write access");
    expect(issueReads()).toBe(1);
  });

  it("redacts a token that does not look like one, wherever GitHub echoes it", async () => {
    await gh.close();
    gh = await startGithubDouble({ token: "plain-secret-value" });
    gh.addIssue({ number: 12, title: "x" });
    gh.fail({ status: 422, body: { message: "Validation Failed: plain-secret-value", documentation_url: "https://docs.github.com/rest" } });
    const message = await failure(trackerOn(gh, { env: { GITHUB_TOKEN: "plain-secret-value" } }).get("12"), "plain-secret-value");
    expect(message).toContain("(GitHub: Validation Failed: [redacted])");
  });

  it("404: an unknown repository or issue says what to check", async () => {
    const repo = await rejection(trackerOn(gh, { config: { repo: "acme/nope" } }).get("12"));
    expect(repo.message).toBe(
      "GitHub found nothing (404) while reading issue #12 in acme/nope: check tracker.repo and the issue number, and that the token in GITHUB_TOKEN can see the repository",
    );
    expect(await failure(trackerOn(gh).get("99"))).toMatch(/^GitHub found nothing \(404\) while reading issue #99 in acme\/widgets/);
  });

  it("403 rate limit: waits for the reset the headers give, then goes on", async () => {
    gh.fail(rateLimited(5));
    expect((await trackerOn(gh).get("12")).title).toBe("Retry the upload");
    expect(issueReads()).toBe(2);
  });

  it("403 rate limit: at most two waits, then one line with the reset time", async () => {
    gh.fail(rateLimited(1, Infinity));
    const message = await failure(trackerOn(gh).get("12"));
    expect(message).toMatch(
      /^GitHub's API rate limit for the token in GITHUB_TOKEN is used up \(403\) for acme\/widgets while reading issue #12; it resets at \d\d:\d\d:\d\d UTC: wait until then/,
    );
    expect(issueReads()).toBe(3);
  });

  it("403 rate limit: a reset beyond the cap fails at once instead of waiting", async () => {
    gh.fail(rateLimited(3600, Infinity));
    expect(await failure(trackerOn(gh).get("12"))).toMatch(/rate limit .* is used up/);
    expect(issueReads()).toBe(1);
  });

  it("429 secondary rate limit: waits per retry-after, bounded, then says how long to wait", async () => {
    gh.fail(secondaryRateLimited(1));
    expect((await trackerOn(gh).get("12")).id).toBe("12");
    expect(issueReads()).toBe(2);

    gh.fail(secondaryRateLimited(2, Infinity));
    const message = await failure(trackerOn(gh).get("12"));
    expect(message).toBe(
      "GitHub's secondary rate limit stopped requests (429) for acme/widgets while reading issue #12: wait 2 s and run the command again, one dissent at a time",
    );
    expect(issueReads()).toBe(2 + 3);
  });

  it("5xx: retried twice, then one line", async () => {
    gh.fail({ status: 502, times: 1 });
    expect((await trackerOn(gh).get("12")).id).toBe("12");
    expect(issueReads()).toBe(2);

    gh.fail({ status: 500, times: Infinity });
    const message = await failure(trackerOn(gh).get("12"));
    expect(message).toBe(
      `GitHub kept failing (500, after retries) for acme/widgets while reading issue #12: try again later, or check the server at ${gh.url}`,
    );
    expect(issueReads()).toBe(2 + 3);
  });

  it("network down: names the address and the repo", async () => {
    gh.fail({ status: 0, destroy: true, times: Infinity });
    const dropped = await failure(trackerOn(gh).get("12"));
    expect(dropped).toMatch(
      new RegExp(`^cannot reach GitHub at ${gh.url} for acme/widgets while reading issue #12 \\(.+\\): check the network connection and tracker.base_url`),
    );
    expect(issueReads()).toBe(3);

    await gh.close();
    expect(await failure(trackerOn(gh).get("12"))).toMatch(/^cannot reach GitHub at .* for acme\/widgets while reading issue #12 \(.*ECONNREFUSED.*\)/);
  });

  it("a request that gets no answer times out, is retried, then is one line", async () => {
    gh.fail({ status: 0, hang: true, times: Infinity });
    const message = await failure(trackerOn(gh, { options: { requestTimeoutMs: 100 } }).get("12"));
    expect(message).toBe(
      `GitHub at ${gh.url} did not answer within 100 ms (after retries) for acme/widgets while reading issue #12: check the network connection and tracker.base_url (${gh.url}), then run the command again`,
    );
    expect(issueReads()).toBe(3);
  });

  it("errors of writes name the step: a 403 on creating labels", async () => {
    gh.fail({
      method: "POST",
      path: /\/labels$/,
      status: 403,
      times: Infinity,
      body: { message: "Must have admin rights to Repository.", documentation_url: "https://docs.github.com/rest" },
    });
    const message = await failure(trackerOn(gh).setLabels("12", { add: ["dissent-plan"], remove: ["dissent-find"] }));
    expect(message).toMatch(/^GitHub denied access \(403\) to acme\/widgets while creating the label dissent-/);
    expect(gh.issues.get(12)?.labels).toEqual(["dissent-find"]);
  });
});
