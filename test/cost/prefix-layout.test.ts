/**
 * Requests laid out for prompt caching (docs/serve.md "Cost", issue 21): through the built CLI and
 * the realistic double, the requests of one round share their prefix byte for byte up to the
 * persona — the common system message, the project, the issue, the rubric, the earlier artifacts,
 * the tracked concerns, the draft under review — and only then differ; the next round repeats all
 * of it but the draft; the rubric (critics) and the format (producers) sit right after the issue in
 * every stage of an issue; the implement review's four reviewers share the diff; the gate's
 * revision extends the executor's request byte for byte.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { readDataBlocks } from "../../src/prompting/data-block.js";
import { promptFile } from "../../src/prompts.js";
import { STAGES } from "../../src/pipeline/stages.js";
import { dissent, scratch } from "../support/cli.js";
import { bench10, perfect, startRealisticDouble, type RealisticDouble } from "../support/double/index.js";
import { openingText, roleOf } from "../support/hold.js";
import type { ChatRequest } from "../support/openai-server.js";
import { implementWorld } from "../support/implement-world.js";
import { rolesConfig } from "../support/roles-config.js";
import { ACCEPTANCE_ROLE, REVIEW_CRITICS } from "../../src/implement/roles.js";

vi.setConfig({ testTimeout: 180_000 });

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const c of open.splice(0)) await c.close();
});

const text = (c: unknown) => (typeof c === "string" ? c : "");
const systemOf = (r: ChatRequest) => text(r.body.messages.find((m) => m.role === "system")?.content);
const firstUser = (r: ChatRequest) => text(r.body.messages.find((m) => m.role === "user")?.content);
/** What a request's chat transcript says, in order, as a provider's prompt cache sees it. */
const transcript = (r: ChatRequest) => r.body.messages.map((m) => `${m.role}\n${text(m.content)}`).join("\n");

function commonPrefix(texts: readonly string[]): string {
  const [first = "", ...rest] = texts;
  let n = first.length;
  for (const t of rest) {
    let i = 0;
    while (i < n && i < t.length && t[i] === first[i]) i++;
    n = i;
  }
  return first.slice(0, n);
}

async function world() {
  const double: RealisticDouble = await startRealisticDouble({ seed: 7, quirks: perfect, scenario: bench10 });
  const s = scratch("dissent-prefix-");
  const project = "The sync service moves customer records between the billing API and the CRM every night.";
  s.write("dissent.config.yaml", rolesConfig(double.url, `project: { name: sync, description: "${project}" }`));
  open.push({ close: async () => (await double.close(), s.cleanup()) });
  const run = (args: string[]) => dissent(args, { cwd: s.dir, env: { DISSENT_HOME: `${s.dir}/home` }, timeoutMs: 150_000 });
  return { double, run, project };
}

describe("a pipeline round shares one prefix", () => {
  it("every critic of a round gets the same bytes up to its persona, the draft last; the next round changes only the draft; rubric and format sit right after the issue in every stage", async () => {
    const { double, run, project } = await world();
    const issue = bench10.list.find((i) => i.title === "Retry 503s in the HTTP client");
    if (!issue) throw new Error("bench10 issue");
    const created = await run(["issue", "new", "--title", issue.title, "--body", issue.body, "--label", "dissent-load-bearing"]);
    expect(created.code, created.stderr).toBe(0);
    const planned = await run(["issue", "plan", created.stdout.trim(), "--json"]);
    expect(planned.code, planned.stderr).toBe(0);

    // Every request of the run, whatever its role, opens with the same system message.
    const systems = new Set(double.requests.map(systemOf));
    expect(systems.size).toBe(1);
    expect([...systems][0]).not.toMatch(/Role: /);

    // The plan council's first round: three critics reviewing the same draft.
    const critics = ["plan.builder", "plan.risk_skeptic", "plan.tester"];
    const round = critics.map((role) => double.requests.find((r) => roleOf(r) === role));
    for (const r of round) expect(r).toBeDefined();
    const requests = round as ChatRequest[];
    // Everything before each critic's persona is the same bytes, and holds every block the critics look at.
    const before = requests.map((r, i) => {
      const at = firstUser(r).indexOf(`\n\nRole: ${critics[i]}\n`);
      expect(at, critics[i]).toBeGreaterThan(0);
      return firstUser(r).slice(0, at);
    });
    expect(new Set(before).size).toBe(1);
    const shared = before[0] ?? "";
    expect(commonPrefix(requests.map(firstUser)).startsWith(shared)).toBe(true);
    const blocks = readDataBlocks(shared).map((b) => `${b.kind}${b.name ? `:${b.name}` : ""}`);
    expect(blocks.filter((b) => b !== "tracked_concerns")).toEqual(["project", "issue", "artifact:shape", "under_review:plan"]);
    expect(shared.indexOf(project)).toBeLessThan(shared.indexOf(issue.title));
    // The rubric all critics follow is shared, between the issue and the earlier artifacts.
    const rubric = promptFile("personas/_format-critic.md").text;
    expect(shared.indexOf(rubric)).toBeGreaterThan(shared.indexOf(issue.title));
    expect(shared.indexOf(rubric)).toBeLessThan(shared.indexOf('<data kind="artifact" name="shape"'));
    // The part that differs is small beside what is shared (what a provider's cache skips).
    for (const r of requests) expect(shared.length).toBeGreaterThan(firstUser(r).length / 2);

    // The next round repeats everything shared but the draft, which comes last: only the draft is new.
    const planCritics = double.requests.filter((r) => STAGES[2]?.critics.includes(roleOf(r)) && firstUser(r).includes('<data kind="under_review" name="plan"'));
    const sharedOf = (r: ChatRequest) => firstUser(r).slice(0, firstUser(r).indexOf(`\n\nRole: ${roleOf(r)}\n`));
    const drafts = new Set(planCritics.map((r) => readDataBlocks(sharedOf(r)).find((b) => b.kind === "under_review")?.text));
    expect(drafts.size, "the plan council reviewed a second draft").toBeGreaterThanOrEqual(2);
    const beforeDraft = new Set(planCritics.map((r) => sharedOf(r).slice(0, sharedOf(r).indexOf("The plan under review:"))));
    expect(beforeDraft.size).toBe(1);
    for (const r of planCritics)
      expect(sharedOf(r).endsWith(`</data tag="${/<data kind="under_review" name="plan" tag="([0-9a-f]+)">/.exec(sharedOf(r))?.[1]}">`)).toBe(true);

    // Across stages, the rubric stays at the same place: every critic request of the issue, whatever its council, starts with the same bytes through it.
    const allCritics = double.requests.filter((r) => STAGES.some((s) => s.critics.includes(roleOf(r))));
    expect(new Set(allCritics.map((r) => STAGES.find((s) => firstUser(r).includes(`<data kind="under_review" name="${s.artifact}"`))?.stage)).size).toBe(4);
    expect(commonPrefix(allCritics.map(firstUser)).trimEnd().endsWith(rubric)).toBe(true);
    // And the producers': every markdown producer's request starts with the same bytes through the format they follow.
    const format = promptFile("personas/_format-producer.md").text;
    const producers = double.requests.filter((r) => ["discover.brief", "shape.writer", "planner"].includes(roleOf(r)));
    expect(new Set(producers.map(roleOf)).size).toBe(3);
    expect(commonPrefix(producers.map(firstUser)).trimEnd().endsWith(format)).toBe(true);

    // What every role is given stays in front: the project and the issue lead every request.
    const lead = commonPrefix(double.requests.map(firstUser));
    expect(readDataBlocks(lead).map((b) => b.kind)).toEqual(["project", "issue"]);
  });
});

describe("a review round of the implement phase", () => {
  it("its four reviewers share every byte through the change under review (review.acceptance follows no rubric); the three findings critics share the rubric after it", async () => {
    const w = await implementWorld({ mode: "bug-then-fix" });
    open.push(w);
    const id = await w.readyIssue();
    const r = await w.run(["issue", "implement", id, "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const reviewers = [...REVIEW_CRITICS, ACCEPTANCE_ROLE] as string[];
    const diffOf = (req: ChatRequest) => readDataBlocks(firstUser(req)).find((b) => b.kind === "under_review" && b.name === "diff")?.text;
    const requests = w.double.requests.filter((req) => reviewers.includes(roleOf(req)) && diffOf(req) !== undefined);
    const rounds = [...new Set(requests.map(diffOf))];
    expect(rounds.length, "a failing attempt, then its fix: two rounds").toBeGreaterThanOrEqual(2);
    const rubric = promptFile("personas/_format-critic.md").text;
    for (const diff of rounds) {
      const round = requests.filter((req) => diffOf(req) === diff);
      expect(new Set(round.map(roleOf))).toEqual(new Set(reviewers));
      const all = commonPrefix(round.map(firstUser));
      expect(readDataBlocks(all).map((b) => b.kind)).toContain("under_review");
      const critics = commonPrefix(round.filter((req) => roleOf(req) !== ACCEPTANCE_ROLE).map(firstUser));
      expect(critics.indexOf(rubric)).toBeGreaterThan(critics.indexOf('<data kind="under_review" name="diff"'));
    }
  });
});

describe("the gate", () => {
  it("run --audit: the revision request repeats the executor's request byte for byte and only then adds the draft and the concerns", async () => {
    const prompt = "How much paracetamol can I take?";
    const bad = "Adults can safely take up to 8 g of paracetamol a day.";
    const double = await startRealisticDouble({
      seed: 7,
      quirks: perfect,
      scenario: {
        drafts: {
          [prompt]: {
            draft: `Paracetamol is a common painkiller. ${bad} Ask a pharmacist if you take other medicines.`,
            defects: [{ sentence: bad, category: "factual_risk", severity: "critical", concern: "8 g a day is twice the maximum adult dose." }],
          },
        },
      },
    });
    const s = scratch("dissent-prefix-gate-");
    open.push({ close: async () => (await double.close(), s.cleanup()) });
    s.write(
      "dissent.config.yaml",
      [
        "providers:",
        `  local: { type: openai-compatible, base_url: "${double.url}" }`,
        "routes:",
        '  executor: { primary: "local:exec-model" }',
        '  challenger: { primary: "local:chal-model" }',
        "retry_backoff_ms: 10",
      ].join("\n"),
    );
    const r = await dissent(["run", "--audit", "--json", prompt], { cwd: s.dir, env: { DISSENT_HOME: `${s.dir}/home` }, timeoutMs: 60_000 });
    expect(r.code, r.stderr).toBe(0);
    const executor = double.byRole("executor")[0];
    const revision = double.byRole("revision")[0];
    if (!executor || !revision) throw new Error(`expected an executor and a revision request, got ${double.requests.map(roleOf).join(", ")}`);
    expect(transcript(revision).startsWith(transcript(executor))).toBe(true);
    expect(revision.body.messages.slice(0, executor.body.messages.length)).toEqual(executor.body.messages);
    expect(openingText(revision)).toContain(prompt);
  });
});
