/**
 * The factory on the GitHub tracker (docs/factory.md), against a local GitHub double: new issues
 * labelled `dissent-find` are planned; an issue closed by a merged pull request while labelled
 * ready, hitl or plan gets `issue merged` with that PR's number — ShippedWithKnownGap, a wiki entry
 * for each CRITICAL/HIGH gap, the label moved to `dissent-fixed` — without anyone typing it.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { startGithubDouble, type GithubDouble } from "../support/github-double.js";
import { closeIssue } from "../support/github-merges.js";
import { factoryLines, factoryWorld, type FactoryWorld } from "../support/factory-world.js";
import { quoteUnderReview } from "../support/quote.js";

vi.setConfig({ testTimeout: 120_000 });

const TOKEN = "ghp_testTOKEN1234567890";
const GAP = "Acceptance criteria never mention concurrent writers to the same upload";

let gh: GithubDouble | undefined;
let w: FactoryWorld | undefined;
afterEach(async () => {
  await w?.close();
  await gh?.close();
  w = gh = undefined;
});

describe("dissent factory on the GitHub tracker", () => {
  it("plans a dissent-find issue; once a merged PR closes it, records the merge: ShippedWithKnownGap and a wiki entry, once", async () => {
    gh = await startGithubDouble({ token: TOKEN });
    gh.addIssue({ number: 12, title: "Accept file uploads on the profile page", body: "Users attach a file of up to 10 MB.", labels: ["dissent-find"] });
    gh.addIssue({ number: 13, title: "Not for dissent", body: "A plain issue." });
    // The spec judge holds one HIGH concern every round: it ships as a known gap.
    w = await factoryWorld(
      (model, _n, req) =>
        model === "spec.judge"
          ? { content: quoteUnderReview(req, JSON.stringify({ findings: [{ severity: "HIGH", category: "edge_cases", concern: GAP }] })) }
          : undefined,
      {
        extra: `tracker: { type: github, repo: "acme/widgets", base_url: "${gh.url}" }`,
      },
    );
    const env = { GITHUB_TOKEN: TOKEN, DISSENT_GITHUB_WRITE_INTERVAL_MS: "0" };

    const planned = await w.run(["factory", "--once", "--json"], { env });
    expect(planned.code, planned.stderr).toBe(0);
    expect(factoryLines(planned.stdout).filter((l) => l.event === "finished")).toEqual([expect.objectContaining({ issue: "12", status: "ready" })]);
    expect(gh.issues.get(12)?.labels).toEqual(["dissent-ready"]);
    expect(gh.issues.get(13)?.labels).toEqual([]);
    const pending = (await w.run(["issue", "show", "12", "--json"], { env })).stdout;
    expect(pending).toContain(GAP);

    // Not merged yet: a closed issue whose pull request was closed unmerged, and one closed by hand, are left alone.
    gh.addIssue({ number: 14, title: "Closed unmerged", labels: ["dissent-ready"] });
    closeIssue(gh, 14, { number: 41, merged: false });
    gh.addIssue({ number: 15, title: "Closed by hand", labels: ["dissent-hitl"] });
    closeIssue(gh, 15);
    closeIssue(gh, 12, { number: 40, merged: true });

    const merged = await w.run(["factory", "--once", "--json"], { env });
    expect(merged.code, merged.stderr).toBe(0);
    const lines = factoryLines(merged.stdout);
    expect(lines).toEqual([expect.objectContaining({ event: "merged", issue: "12", pr: 40, gaps: 1, wiki_entries: [expect.any(String)] })]);
    const entry = String((lines[0]?.wiki_entries as string[])[0]);

    const events = (await w.run(["events", "--issue", "12", "--json"], { env })).stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { type: string; pr?: number; concerns?: { concern: string }[]; wiki_entries?: string[] });
    const shipped = events.filter((e) => e.type === "ShippedWithKnownGap");
    expect(shipped).toHaveLength(1);
    expect(shipped[0]).toMatchObject({ pr: 40, wiki_entries: [entry] });
    expect(shipped[0]?.concerns?.map((c) => c.concern)).toEqual([GAP]);
    const wikiDir = join(w.home, "wiki");
    expect(readdirSync(wikiDir)).toEqual([`${entry}.md`]);
    const text = readFileSync(join(wikiDir, `${entry}.md`), "utf8");
    expect(text).toMatch(/confidence: low/);
    expect(text).toMatch(/source: shipped-with-known-gap/);
    expect(text).toContain(GAP);
    expect(gh.issues.get(12)?.labels).toEqual(["dissent-fixed"]);
    expect(gh.issues.get(14)?.labels).toEqual(["dissent-ready"]);
    expect(gh.issues.get(15)?.labels).toEqual(["dissent-hitl"]);

    // The next poll finds nothing more to merge.
    const again = await w.run(["factory", "--once", "--json"], { env });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toBe("");
    const after = (await w.run(["events", "--issue", "12", "--json"], { env })).stdout
      .trim()
      .split("\n")
      .filter((l) => l.includes('"ShippedWithKnownGap"'));
    expect(after).toHaveLength(1);
    expect(planned.stdout + merged.stdout + again.stdout + planned.stderr + merged.stderr).not.toContain(TOKEN);
  });

  it("a token GitHub rejects stops --once with one line naming the variable, exit 1", async () => {
    gh = await startGithubDouble({ token: TOKEN });
    gh.addIssue({ number: 12, title: "Retry uploads", labels: ["dissent-find"] });
    w = await factoryWorld(undefined, { extra: `tracker: { type: github, repo: "acme/widgets", base_url: "${gh.url}" }` });
    const r = await w.run(["factory", "--once"], { env: { GITHUB_TOKEN: "ghp_wrongTOKEN000000000", DISSENT_GITHUB_WRITE_INTERVAL_MS: "0" } });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^dissent: error: GitHub rejected the token in GITHUB_TOKEN \(401\)[^\n]*\n$/);
    expect(w.server.requests).toHaveLength(0);
  });

  it("a token GitHub rejects stops the running factory too (docs/factory.md: an auth error stops it), exit 1, one line", async () => {
    gh = await startGithubDouble({ token: TOKEN });
    gh.addIssue({ number: 12, title: "Retry uploads", labels: ["dissent-find"] });
    w = await factoryWorld(undefined, { extra: `tracker: { type: github, repo: "acme/widgets", base_url: "${gh.url}" }\nfactory: { poll_interval_s: 0.2 }` });
    // No --once: a factory that only warned would poll on until this run's timeout kills it (code null).
    const r = await w.run(["factory"], { env: { GITHUB_TOKEN: "ghp_wrongTOKEN000000000", DISSENT_GITHUB_WRITE_INTERVAL_MS: "0" }, timeoutMs: 60_000 });
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/^dissent: error: GitHub rejected the token in GITHUB_TOKEN \(401\)[^\n]*\n$/);
    expect(w.server.requests).toHaveLength(0);
  });
});
