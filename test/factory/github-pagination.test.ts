/**
 * Issue 20 item 7, through the built CLI against a local GitHub double: a listing is read at most
 * 100 pages (and says so), a next-page link to another origin is never followed with the token, and
 * a SIGTERM while GitHub hangs stops `factory --once` at once (143), not after the request timeouts.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it, vi } from "vitest";
import { factoryWorld, type FactoryWorld } from "../support/factory-world.js";
import { startGithubDouble, type GithubDouble } from "../support/github-double.js";
import { linesOf } from "../support/hold.js";
import { until } from "../support/proc.js";

vi.setConfig({ testTimeout: 120_000 });

const TOKEN = "ghp_pagesTOKEN1234567890";
const env = { GITHUB_TOKEN: TOKEN, DISSENT_GITHUB_WRITE_INTERVAL_MS: "0" };

let gh: GithubDouble | undefined;
let w: FactoryWorld | undefined;
let elsewhere: Server | undefined;
afterEach(async () => {
  await w?.close();
  await gh?.close();
  await new Promise<void>((resolve) => (elsewhere ? elsewhere.close(() => resolve()) : resolve()));
  w = gh = elsewhere = undefined;
});

/** A factory world on the GitHub double. */
async function githubWorld(double: GithubDouble): Promise<FactoryWorld> {
  return factoryWorld(undefined, { extra: `tracker: { type: github, repo: "acme/widgets", base_url: "${double.url}" }` });
}

describe("GitHub pagination holds", () => {
  it("an API that always answers rel=next: each listing stops after 100 pages and says so; --once ends", async () => {
    gh = await startGithubDouble({ token: TOKEN });
    const double = gh;
    // Every issue listing answers an empty page that links to another page, forever.
    double.fail({
      method: "GET",
      path: /\/issues$/,
      status: 200,
      body: [],
      headers: { link: `<${double.url}/repos/acme/widgets/issues?page=2&per_page=100>; rel="next"` },
      times: 1_000_000,
    });
    w = await githubWorld(double);
    const r = await w.run(["factory", "--once", "--json"], { env, timeoutMs: 90_000 });
    expect(r.code, r.stderr).toBe(0);
    const warnings = linesOf(r.stderr);
    expect(warnings.length).toBeGreaterThan(0);
    for (const line of warnings) expect(line).toMatch(/^dissent: warning: listing (open|closed) issues for acme\/widgets: stopped after 100 pages/);
    const listings = double.requests.filter((q) => q.method === "GET" && q.path.endsWith("/issues"));
    expect(listings.length).toBeLessThanOrEqual(200); // open and closed issues, 100 pages each at most
  });

  it("a next-page link to another origin is not followed: that server never sees the token; one line, exit 1", async () => {
    const seen: (string | undefined)[] = [];
    elsewhere = createServer((req, res) => {
      seen.push(req.headers.authorization);
      res.writeHead(200, { "content-type": "application/json" });
      res.end("[]");
    });
    const other = elsewhere;
    await new Promise<void>((resolve) => other.listen(0, "127.0.0.1", resolve));
    const otherUrl = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
    gh = await startGithubDouble({ token: TOKEN });
    gh.fail({ method: "GET", path: /\/issues$/, status: 200, body: [], headers: { link: `<${otherUrl}/steal?page=2>; rel="next"` }, times: 1_000 });
    w = await githubWorld(gh);
    const r = await w.run(["factory", "--once", "--json"], { env });
    expect(r.code, r.stderr).toBe(1);
    const lines = linesOf(r.stderr);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^dissent: error: .*next-page link to http:\/\/127\.0\.0\.1:\d+, not http:\/\/127\.0\.0\.1:\d+: not followed/);
    expect(r.stderr).not.toContain(TOKEN);
    expect(seen).toEqual([]);
  });

  it("SIGTERM while GitHub does not answer: out at once with 143, no error line", async () => {
    gh = await startGithubDouble({ token: TOKEN });
    gh.fail({ method: "GET", path: /\/issues$/, status: 200, hang: true, times: 1_000 });
    w = await githubWorld(gh);
    const double = gh;
    const { child, done } = w.start(["factory", "--once", "--json"], { env });
    await until(() => double.requests.some((q) => q.path.endsWith("/issues")), 30_000);
    child.kill("SIGTERM");
    // The old factory waited out 30 s request timeouts (and retried): the test's kill after 20 s is the failure.
    const killer = setTimeout(() => child.kill("SIGKILL"), 20_000);
    const r = await done;
    clearTimeout(killer);
    expect(r.code, r.stderr).toBe(143);
    expect(r.stderr).toBe("");
  });
});
