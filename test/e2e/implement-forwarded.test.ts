/**
 * Forwarded concerns settled by the implementation's review (issue 33, docs/implement.md "Forwarded
 * concerns"), end to end on GitHub through the built CLI: the plan forwards two HIGH concerns to
 * implementation; the agent's diff adds the test the first asks for and ignores the second;
 * `review.acceptance` settles the first (quoting the diff) and finds the second not addressed. The pull
 * request lists one settled and one unresolved, and on merge only the ignored one becomes a wiki entry.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { frontier } from "../support/double/index.js";
import { factoryLines } from "../support/factory-world.js";
import { implementWorld, plannedOnGithub, SUM_FORWARDED } from "../support/implement-world.js";

vi.setConfig({ testTimeout: 240_000 });

interface ConcernJson {
  id: string;
  raised_by: string;
  severity: string;
  concern: string;
  must_address_by: string;
}
interface ImplementJson {
  status: string;
  stage: { outcome: string };
  forwarded_concerns: { id: string; verdict: string; evidence?: string; file?: string }[];
  pending_concerns: ConcernJson[];
  pull_request: { number: number | null };
}
interface EventJson {
  type: string;
  resolution?: { concern_id: string; resolution_kind: string; note: string; resolved_by: string };
  concern?: ConcernJson;
  reason?: string;
  concerns?: ConcernJson[];
  wiki_entries?: string[];
}

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const x of open.splice(0).reverse()) await x.close();
});

const [NEGATIVES, NON_NUMBERS] = SUM_FORWARDED;

/** The sum issue planned on GitHub with two HIGHs forwarded to implementation, and the CLI as a user runs it there. */
async function forwardedOnGithub() {
  // A criteria writer that ignores the judge: its two HIGHs oscillate and go on, through the plan's review, to implementation.
  const w = await implementWorld({
    mode: "good-and-negatives",
    quirks: { ...frontier, producerIgnores: true },
    defects: SUM_FORWARDED,
    extra: "factory: { implement: true }",
  });
  open.push(w);
  const { gh, env } = await plannedOnGithub(w);
  open.push(gh);
  const run = async (args: string[], mode?: string) => {
    const r = await w.run(args, { env: { ...env, ...(mode ? { AGENT_MODE: mode } : {}) } });
    expect(r.code, r.stderr).toBe(0);
    return r.stdout;
  };
  const events = async () =>
    (await run(["events", "--issue", "1", "--json"]))
      .trim()
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as EventJson);
  const planned = JSON.parse(await run(["issue", "show", "1", "--json"])) as { status: string; pending_concerns: ConcernJson[] };
  expect(planned.status).toBe("ready");
  const forwarded = planned.pending_concerns.filter((c) => c.must_address_by === "implement");
  const negatives = forwarded.find((c) => NEGATIVES?.wordings.includes(c.concern));
  const nonNumbers = forwarded.find((c) => NON_NUMBERS?.wordings.includes(c.concern));
  expect(negatives).toMatchObject({ severity: "HIGH", raised_by: "spec.judge" });
  expect(nonNumbers).toMatchObject({ severity: "HIGH", raised_by: "spec.judge" });
  const implement = async (mode?: string) => JSON.parse(await run(["issue", "implement", "1", "--json"], mode)) as ImplementJson;
  /** The pull request's body, and its Forwarded and Unresolved sections. */
  const body = (number: number) => {
    const text = gh.pulls.get(number)?.body ?? "";
    return {
      text,
      forwarded: text.slice(text.indexOf("\n## Forwarded concerns\n"), text.indexOf("\n## Tests\n")),
      unresolved: text.slice(text.indexOf("\n## Unresolved concerns\n")),
    };
  };
  return { w, gh, run, events, implement, body, negatives: negatives as ConcernJson, nonNumbers: nonNumbers as ConcernJson };
}

const byReview = (events: EventJson[]) => events.filter((e) => e.type === "ConcernAddressed" && e.resolution?.resolved_by === "review.acceptance");

describe("concerns the plan forwards to implementation are settled by the review of the diff", () => {
  it("the one the diff addresses is settled with its quote and never reaches the wiki; the one it ignores stays unresolved in the pull request and becomes a known gap on merge", async () => {
    const { gh, run, events, implement, body: bodyOf, negatives, nonNumbers } = await forwardedOnGithub();
    const out = await implement();
    expect(out.stage.outcome).toBe("converged");
    expect(out.status).toBe("review");
    // review.acceptance quoted the test line the agent added; the other it found not addressed.
    const settledNegatives = out.forwarded_concerns.find((f) => f.id === negatives?.id);
    expect(settledNegatives).toMatchObject({ verdict: "addressed", file: "test.js" });
    expect(settledNegatives?.evidence?.toLowerCase()).toContain("assert.equal(sum(-2, -3), -5);");
    expect(out.forwarded_concerns.find((f) => f.id === nonNumbers?.id)).toMatchObject({ verdict: "not_addressed" });
    expect(out.pending_concerns.map((c) => c.id)).not.toContain(negatives?.id);
    expect(out.pending_concerns.find((c) => c.id === nonNumbers?.id)).toMatchObject({ must_address_by: "pull_request" });

    // The settlement is on the record: resolved by review.acceptance, in a test, with its quote.
    const recorded = await events();
    const resolved = byReview(recorded);
    expect(resolved.map((e) => e.resolution?.concern_id)).toEqual([negatives?.id]);
    expect(resolved[0]?.resolution).toMatchObject({ resolution_kind: "addressed-in-test" });
    expect(resolved[0]?.resolution?.note.toLowerCase()).toContain("assert.equal(sum(-2, -3), -5);");
    // Carried to the pull request: the ignored one (and any other concern the plan forwarded), never the settled one.
    const carried = recorded.filter((e) => e.type === "ConcernForwarded" && e.reason === "carried").map((e) => e.concern?.id);
    expect(carried).toContain(nonNumbers?.id);
    expect(carried).not.toContain(negatives?.id);

    // The pull request says which is which: one settled with the quote, one not addressed and unresolved.
    const number = out.pull_request.number ?? 0;
    const { forwarded: section, unresolved } = bodyOf(number);
    expect(section).toMatch(
      new RegExp(`- \\[x\\] \\*\\*${negatives?.id}\\*\\* HIGH \\(spec\\.judge\\): .*settled: addressed in the diff \\(\`test\\.js\`\\) — “`),
    );
    expect(section.toLowerCase()).toContain("assert.equal(sum(-2, -3), -5);");
    expect(section).toMatch(new RegExp(`- \\[ \\] \\*\\*${nonNumbers?.id}\\*\\* HIGH \\(spec\\.judge\\): .*\\*\\*not addressed\\*\\* by the diff`));
    expect(unresolved).toContain(`**${nonNumbers?.id}** HIGH`);
    expect(unresolved).toContain("forwarded, not addressed by the diff");
    expect(unresolved).not.toContain(`**${negatives?.id}**`);

    // The attempt's check and its review on the pull request say the same.
    const said = new RegExp(`Forwarded concerns: ${negatives?.id} addressed in the diff, ${nonNumbers?.id} not addressed[,.]`);
    expect(gh.checkRuns.find((c) => c.name === "dissent")?.output.summary).toMatch(said);
    expect(gh.reviews.find((r) => r.pull === number)?.body).toMatch(said);

    // Merged on GitHub; the factory records the merge: only the ignored concern ships as a known gap.
    const merge = await fetch(`${gh.url}/repos/${gh.owner}/${gh.repo}/pulls/${number}/merge`, {
      method: "PUT",
      headers: { authorization: `token ${gh.token}`, "content-type": "application/json" },
      body: JSON.stringify({ merge_method: "merge" }),
    });
    expect(merge.status).toBe(200);
    const polled = factoryLines(await run(["factory", "--once", "--json"])).filter((l) => l.event === "merged");
    expect(polled).toEqual([expect.objectContaining({ issue: "1", pr: number })]);
    const shipped = (await events()).filter((e) => e.type === "ShippedWithKnownGap");
    expect(shipped).toHaveLength(1);
    const gaps = shipped[0]?.concerns?.map((c) => c.id) ?? [];
    expect(gaps).toContain(nonNumbers?.id);
    expect(gaps).not.toContain(negatives?.id);
    const entries = shipped[0]?.wiki_entries ?? [];
    expect(entries).toHaveLength(1);
    const wiki = await run(["wiki", "show", entries[0] ?? ""]);
    expect(wiki).toContain(nonNumbers?.concern);
    expect(wiki).not.toContain(negatives?.concern);
  });

  it("a later run asks again: the same diff keeps the concern settled, resolved once; a diff that drops the fix leaves it unresolved again, a known gap on merge", async () => {
    const { run, events, implement, body: bodyOf, negatives, nonNumbers } = await forwardedOnGithub();
    const first = await implement();
    const ours = (f: { id: string }) => f.id === negatives.id || f.id === nonNumbers.id; // the plan may forward others too (a critic's noise)
    expect(first.forwarded_concerns.filter(ours).map((f) => f.verdict)).toEqual(["addressed", "not_addressed"]);
    const number = first.pull_request.number ?? 0;

    // The same agent again: the pull request is updated in place and still says the concern is settled.
    const second = await implement();
    expect(second.pull_request.number).toBe(number);
    expect(second.forwarded_concerns.filter(ours).map((f) => [f.id, f.verdict])).toEqual([
      [negatives.id, "addressed"],
      [nonNumbers.id, "not_addressed"],
    ]);
    expect(bodyOf(number).forwarded).toMatch(new RegExp(`- \\[x\\] \\*\\*${negatives.id}\\*\\*.*settled: addressed in the diff`));
    expect(byReview(await events())).toHaveLength(1);

    // An agent that takes the negatives test out: the concern is not addressed by this diff, and unresolved again.
    const third = await implement("good-without-negatives");
    expect(third.forwarded_concerns.find((f) => f.id === negatives.id)).toMatchObject({ verdict: "not_addressed" });
    expect(third.pending_concerns.find((c) => c.id === negatives.id)).toMatchObject({ must_address_by: "pull_request" });
    const { forwarded, unresolved } = bodyOf(number);
    expect(forwarded).toMatch(new RegExp(`- \\[ \\] \\*\\*${negatives.id}\\*\\*.*\\*\\*not addressed\\*\\* by the diff`));
    expect(unresolved).toContain(`**${negatives.id}** HIGH`);

    await run(["issue", "merged", "1", "--pr", String(number)]);
    const shipped = (await events()).filter((e) => e.type === "ShippedWithKnownGap");
    expect(shipped[0]?.concerns?.map((c) => c.id).sort()).toEqual(expect.arrayContaining([negatives.id, nonNumbers.id]));
    expect(shipped[0]?.wiki_entries).toHaveLength(2);
  });
});
