/**
 * Issue #9 end to end, through the built CLI against servers on 127.0.0.1:
 *  - defect 11: a critic never silently disappears (errors, timeouts, schema failures, missing keys);
 *  - defect 19: keyword heuristics never route an issue trivial;
 *  - defect 20: terminal output (width of the live status, escape sequences, signals, progress off a TTY);
 *  - CONTRACT r2 CLI rules: --no-cache replaces, `cache clear`, `issue plan --no-cache/--replay/--verbose`,
 *    `issue show --artifact`, `issue label`, the same-model warning.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { TRANSIENT_LABELS } from "../../src/contracts/labels.js";
import type { CliResult } from "../support/cli.js";
import { errorLine } from "../support/e2e.js";
import type { Reply } from "../support/openai-server.js";
import { until } from "../support/proc.js";
import {
  PIPELINE_ROLES,
  defaultArtifact,
  findings,
  holdWorld,
  linesOf,
  ok,
  screenPieces,
  underPty,
  widthOf,
  type Answer,
  type HoldWorld,
} from "../support/hold.js";

// Each test spawns the CLI several times and runs whole planning cycles; give a loaded machine room.
vi.setConfig({ testTimeout: 180_000 });

let w: HoldWorld | undefined;
const releases: (() => void)[] = [];
afterEach(async () => {
  for (const r of releases.splice(0)) r();
  await w?.close();
  w = undefined;
});

/** A reply the server holds until the test ends (or `release` is called). */
function held(reply: Reply = { content: findings([]) }): { answer: () => Promise<Reply>; release: () => void } {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  releases.push(() => release());
  return { answer: async () => (await gate, reply), release: () => release() };
}

interface StageRunJson {
  stage: string;
  phase: string;
  rounds: number;
  outcome: string;
  calls: number;
  critic_failures: number;
}
interface ConcernJson {
  id: string;
  severity: string;
  category: string;
  concern: string;
  raised_by: string;
  stage: string;
}
interface PlanJson {
  issue: string;
  route: string;
  route_reason: string;
  status: string;
  plan: string;
  labels: string[];
  calls: number;
  stages: StageRunJson[];
  pending_concerns: ConcernJson[];
}

const planJson = (r: CliResult): PlanJson => JSON.parse(ok(r, "issue plan").stdout) as PlanJson;
const warnings = (stderr: string) => linesOf(stderr).filter((l) => l.startsWith("dissent: warning:"));
const labelsOf = async (id: string) =>
  (JSON.parse(ok(await (w as HoldWorld).run(["issue", "show", id, "--json"]), "issue show").stdout) as { labels: string[] }).labels;

const TITLE = "Add comment threads to blog posts";
const BODY = "Readers can reply to a comment, and replies nest one level deep.";
const FAILING = "discovery.problem_sharpener";

describe("defect 11: a critic that fails is never silent", () => {
  const failures: [string, Answer, number?][] = [
    [
      "404",
      { status: 404, raw: JSON.stringify({ error: { message: "The model `discovery.problem_sharpener` does not exist", type: "invalid_request_error" } }) },
    ],
    [
      "429 after its retries",
      { status: 429, headers: { "retry-after": "0" }, raw: JSON.stringify({ error: { message: "Rate limit reached, slow down", type: "rate_limit_error" } }) },
    ],
    ["500", { status: 500 }],
    ["a timeout", { delayMs: 60_000, content: findings([]) }, 3000],
    ["a reply that fails its schema", { content: JSON.stringify({ findings: "none found, looks fine" }) }],
  ];

  it.each(failures)(
    "a critic answering %s: one warning naming critic, stage and round; ModelCall error; critic_failures; review_incomplete",
    async (_name, answer, timeout) => {
      w = await holdWorld({ [FAILING]: answer }, timeout ? { callTimeoutMs: timeout } : {});
      const id = await w.newIssue(TITLE, BODY);
      const r = await w.run(["issue", "plan", id, "--json"]);
      const out = planJson(r);

      // stderr: exactly one warning line names the failing critic, with the stage and the round
      const about = warnings(r.stderr).filter((l) => l.includes(FAILING));
      expect(about, r.stderr).toHaveLength(1);
      expect(about[0]).toMatch(/discover/);
      expect(about[0]).toMatch(/round 1\b/);

      // the StageRun counts it
      const discover = out.stages.find((s) => s.phase === "discover");
      expect(discover?.critic_failures).toBe(1);
      for (const s of out.stages.filter((x) => x.phase !== "discover")) expect(s.critic_failures).toBe(0);

      // the ModelCall event of that critic carries the error
      const calls = (await w.events(id)).filter((e) => e.type === "ModelCall" && e.role === FAILING);
      expect(calls.length).toBeGreaterThanOrEqual(1);
      for (const c of calls) expect(typeof c.error === "string" && c.error.length > 0, JSON.stringify(c)).toBe(true);

      // it failed in every round of its stage: one MEDIUM review_incomplete concern names it
      const incomplete = out.pending_concerns.filter((c) => c.category === "review_incomplete");
      expect(incomplete).toHaveLength(1);
      expect(incomplete[0]).toMatchObject({ severity: "MEDIUM" });
      expect(incomplete[0]?.concern).toContain(FAILING);
      // and the issue is not "ready" as if it had been reviewed in silence: the gap is on record
      const show = JSON.parse(ok(await w.run(["issue", "show", id, "--json"]), "show").stdout) as { pending_concerns: ConcernJson[] };
      expect(show.pending_concerns.map((c) => c.category)).toContain("review_incomplete");
    },
  );

  it("a critic that fails in round 1 only is warned about once and adds no review_incomplete", async () => {
    const EVIDENCE = "A plain, stable draft from discover.brief";
    w = await holdWorld({
      // 404 is not retried, so the critic's first request is its whole round 1
      [FAILING]: (_req, n) => (n === 0 ? { status: 404 } : findings([])),
      // a CRITICAL in round 1 only forces a second round
      "discovery.existing_solution_hunter": (_req, n) =>
        findings(
          n === 0
            ? [
                {
                  severity: "CRITICAL",
                  category: "existing_solution",
                  evidence: EVIDENCE,
                  concern: "The brief ignores the comment plugin the blog already ships",
                },
              ]
            : [],
        ),
    });
    const id = await w.newIssue(TITLE, BODY);
    const r = await w.run(["issue", "plan", id, "--json"]);
    const out = planJson(r);
    const discover = out.stages.find((s) => s.phase === "discover");
    expect(discover?.rounds).toBe(2);
    expect(discover?.critic_failures).toBe(1);
    const about = warnings(r.stderr).filter((l) => l.includes(FAILING));
    expect(about).toHaveLength(1);
    expect(about[0]).toMatch(/round 1\b/);
    expect(out.pending_concerns.filter((c) => c.category === "review_incomplete")).toEqual([]);
  });

  describe("a critic routed to a provider whose API key is unset", () => {
    it("type openai without OPENAI_API_KEY: issue plan exits 2 naming the provider and the variable, before any request", async () => {
      w = await holdWorld({}, (url) =>
        [
          "providers:",
          `  local: { type: openai-compatible, base_url: "${url}" }`,
          `  cloud: { type: openai, base_url: "${url}" }`,
          "routes:",
          ...PIPELINE_ROLES.map((r) => `  ${JSON.stringify(r)}: { primary: "${r === "plan.tester" ? "cloud:gpt-4o-mini" : `local:${r}`}" }`),
          "retry_backoff_ms: 1",
        ].join("\n"),
      );
      const id = await w.newIssue(TITLE, BODY);
      const r = await w.run(["issue", "plan", id]);
      expect(r.code).toBe(2);
      const line = errorLine(r);
      expect(line).toContain("cloud");
      expect(line).toContain("OPENAI_API_KEY");
      expect(w.server.requests).toHaveLength(0);
      expect(await labelsOf(id)).toEqual(["dissent-find"]);
    });

    it.each([
      ["openai", "type openai"],
      ["openai-compatible", "type openai-compatible (a key named in api_key_env is a key the provider needs)"],
    ])("api_key_env naming an unset variable (%s): the same, naming that variable", async (type) => {
      w = await holdWorld(
        {},
        {
          providers: [`  keyed: { type: ${type}, base_url: "${"URL"}", api_key_env: KEYED_API_KEY }`],
          routes: { "shape.tech_lead": "keyed:tech-lead-model" },
        },
      );
      // the provider points at the test server, so a request it sends would be counted
      w.write("dissent.config.yaml", readFileSync(join(w.dir, "dissent.config.yaml"), "utf8").replace('"URL"', JSON.stringify(w.server.url)));
      const id = await w.newIssue(TITLE, BODY);
      const r = await w.run(["issue", "plan", id, "--json"]);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stdout).toBe("");
      const line = errorLine(r);
      expect(line).toContain("keyed");
      expect(line).toContain("KEYED_API_KEY");
      expect(w.server.requests).toHaveLength(0);
      expect(await labelsOf(id)).toEqual(["dissent-find"]);
    });

    it("run --audit with the challenger's key missing exits 2 before any request; run without --audit does not need it", async () => {
      w = await holdWorld({}, (url) =>
        [
          "providers:",
          `  local: { type: openai-compatible, base_url: "${url}" }`,
          `  cloud: { type: openai, base_url: "${url}" }`,
          "routes:",
          '  executor: { primary: "local:exec-model" }',
          '  challenger: { primary: "cloud:gpt-4o-mini" }',
          "retry_backoff_ms: 1",
        ].join("\n"),
      );
      const r = await w.run(["run", "--audit", "What is 2 + 2?"]);
      expect(r.code).toBe(2);
      const line = errorLine(r);
      expect(line).toContain("cloud");
      expect(line).toContain("OPENAI_API_KEY");
      expect(w.server.requests).toHaveLength(0);

      const plain = await w.run(["run", "What is 2 + 2?"]);
      expect(plain.code, plain.stderr).toBe(0);
      expect(plain.stdout).toBe("The answer is 4.\n");
    });
  });
});

describe("defect 19: heuristics never route an issue trivial", () => {
  const titles = ["Fix typo in isAdmin check", "Add comment threads to blog posts", "Support custom date formatting in CSV export"];

  it.each(titles)("'%s': the complexity_gate model is asked once and its TRIVIAL decides", async (title) => {
    w = await holdWorld({ complexity_gate: "TRIVIAL" });
    const id = await w.newIssue(title);
    const out = planJson(await w.run(["issue", "plan", id, "--json"]));
    expect(w.requestsOf("complexity_gate")).toHaveLength(1);
    expect(out.route).toBe("trivial");
    expect(out.route_reason).toMatch(/model/i);
    expect(out.stages).toEqual([]);
    const routed = (await w.events(id)).filter((e) => e.type === "ComplexityGateRouted");
    expect(routed).toHaveLength(1);
  });

  it.each(titles)("'%s' with no label and the model answering LOAD-BEARING is load-bearing", async (title) => {
    w = await holdWorld({ complexity_gate: "LOAD-BEARING" });
    const id = await w.newIssue(title);
    const out = planJson(await w.run(["issue", "plan", id, "--json"]));
    expect(w.requestsOf("complexity_gate")).toHaveLength(1);
    expect(out.route).toBe("load_bearing");
    expect(out.stages.map((s) => s.phase)).toEqual(["discover", "shape", "plan", "spec"]);
  });
});

describe("defect 20: terminal output", () => {
  it("under an 80-column terminal no piece of the live status is wider than 80 columns", async () => {
    w = await holdWorld();
    const id = await w.newIssue(TITLE, BODY);
    // stdout (the result table) to a file: the terminal shows stderr, the live status
    const r = await underPty(["issue", "plan", id], { cwd: w.dir, cols: 80, env: { DISSENT_HOME: w.home }, stdoutTo: "plan.out" });
    expect(r.code, r.stdout).toBe(0);
    const pieces = screenPieces(r.stdout);
    // the live status was shown (a critic tally of the discover round), not only the final table
    expect(
      pieces.some((p) => /discover r1/.test(p)),
      r.stdout,
    ).toBe(true);
    const statusPieces = pieces.filter((p) => p.startsWith("dissent:"));
    expect(statusPieces.length).toBeGreaterThan(0);
    for (const p of statusPieces) expect(widthOf(p), JSON.stringify(p)).toBeLessThanOrEqual(80);
  });

  it("the live status of a long title and long critic names still fits 40 columns", async () => {
    w = await holdWorld();
    const id = await w.newIssue(`${"Very long title ".repeat(12)}end`, BODY);
    const r = await underPty(["issue", "plan", id], { cwd: w.dir, cols: 40, env: { DISSENT_HOME: w.home }, stdoutTo: "plan.out" });
    expect(r.code, r.stdout).toBe(0);
    const live = screenPieces(r.stdout).filter((p) => /^dissent: (discover|shape|plan|spec) r\d/.test(p));
    expect(live.length).toBeGreaterThan(0);
    for (const p of live) expect(widthOf(p), JSON.stringify(p)).toBeLessThanOrEqual(40);
  });

  it("titles and model text with escape sequences are printed without them (issue list, show, plan, events)", async () => {
    const ESC_TITLE = "Evil \u001b]0;pwned\u0007title \u001b[2J with escapes";
    const ESC_BODY = "Body \u001b[31mred\u001b[0m and \u001b]8;;http://x.test\u0007link\u001b]8;;\u0007 text.";
    w = await holdWorld({
      planner: "# Plan\n\n1. Clear the screen \u001b[2J and set the title \u001b]0;pwned\u0007 here.\n",
      "plan.tester": findings([
        { severity: "MEDIUM", category: "test_strategy", concern: "Tests never cover \u001b[2J\u001b]0;pwned\u0007 escape handling in titles" },
      ]),
    });
    const id = await w.newIssue(ESC_TITLE, ESC_BODY);
    const plan = await w.run(["issue", "plan", id]);
    expect(plan.code, plan.stderr).toBe(0);
    const shown = [plan, await w.run(["issue", "list"]), await w.run(["issue", "show", id]), await w.run(["events", "--issue", id])];
    for (const r of shown) {
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout, JSON.stringify(r.stdout)).not.toMatch(/[\u001b\u0007\u009b]/);
      expect(r.stderr, JSON.stringify(r.stderr)).not.toMatch(/[\u001b\u0007\u009b]/);
    }
    // the visible words survive
    expect(shown[1]?.stdout).toContain("Evil");
    expect(shown[2]?.stdout).toContain("escape handling in titles");
    expect(shown[0]?.stdout).toContain("escape handling in titles");
  });

  it.each([
    ["SIGTERM", 143],
    ["SIGINT", 130],
  ] as const)("%s to a running issue plan exits %i and leaves no transient label", async (signal, code) => {
    const hold = held();
    w = await holdWorld({ "shape.user_advocate": hold.answer });
    const id = await w.newIssue(TITLE, BODY);
    const p = w.start(["issue", "plan", id]);
    await until(() => (w as HoldWorld).requestsOf("shape.user_advocate").length > 0, 60_000);
    // the shape phase is running: its transient label is on the issue
    expect(await labelsOf(id)).toContain("dissent-adv-shape-running");
    p.child.kill(signal);
    const r = await p.done;
    hold.release();
    expect(r.code, r.stderr).toBe(code);
    const labels = await labelsOf(id);
    for (const t of TRANSIENT_LABELS) expect(labels).not.toContain(t);
    // and the issue resumes: a second plan finishes
    const again = planJson(await w.run(["issue", "plan", id, "--json"]));
    expect(again.status).toBe("ready");
  });

  it("off a TTY, issue plan prints one line per finished stage on stderr while it runs", async () => {
    let stderrSoFar: () => string = () => "";
    let sawDiscoverFirst = false;
    w = await holdWorld({
      // the shape producer answers only once the discover stage's line has reached stderr
      "shape.writer": async () => {
        try {
          await until(() => /^dissent: discover /m.test(stderrSoFar()), 30_000);
          sawDiscoverFirst = true;
        } catch {
          // the line never came while the process ran: the test fails below
        }
        return defaultArtifact("shape.writer");
      },
    });
    const id = await w.newIssue(TITLE, BODY);
    const p = w.start(["issue", "plan", id]);
    stderrSoFar = p.stderrSoFar;
    const r = await p.done;
    expect(r.code, r.stderr).toBe(0);
    expect(sawDiscoverFirst).toBe(true);
    const stageLines = linesOf(r.stderr).filter((l) => /^dissent: (discover|shape|plan|spec) /.test(l));
    expect(stageLines.map((l) => l.split(" ")[1])).toEqual(["discover", "shape", "plan", "spec"]);
    // no terminal control off a TTY
    expect(r.stderr).not.toMatch(/[\r\u001b]/);
  });
});

describe("CONTRACT r2: the reply cache from the CLI", () => {
  it("--no-cache replaces the cached reply; later runs and --replay give the new one", async () => {
    w = await holdWorld({ executor: (_req, n) => (n === 0 ? "First draft answer." : "Second draft answer.") });
    const first = await w.run(["run", "What is 2 + 2?"]);
    expect(first.stdout).toBe("First draft answer.\n");
    const bypass = await w.run(["run", "--no-cache", "What is 2 + 2?"]);
    expect(bypass.code, bypass.stderr).toBe(0);
    expect(bypass.stdout).toBe("Second draft answer.\n");
    expect(w.requestsOf("executor")).toHaveLength(2);
    const again = await w.run(["run", "What is 2 + 2?"]);
    expect(again.stdout).toBe("Second draft answer.\n");
    expect(w.requestsOf("executor")).toHaveLength(2);
    const replay = await w.run(["run", "--replay", "What is 2 + 2?"]);
    expect(replay.code, replay.stderr).toBe(0);
    expect(replay.stdout).toBe("Second draft answer.\n");
    expect(w.requestsOf("executor")).toHaveLength(2);
    const both = await w.run(["run", "--no-cache", "--replay", "What is 2 + 2?"]);
    expect(both.code).toBe(2);
    errorLine(both);
  });

  it("dissent cache clear [--older-than DAYS] says how many replies it removed", async () => {
    w = await holdWorld({ challenger: JSON.stringify({ concerns: [], verdict: "pass" }) });
    ok(await w.run(["run", "--audit", "What is 2 + 2?"]), "run");
    expect(w.server.requests).toHaveLength(2);

    const young = await w.run(["cache", "clear", "--older-than", "1"]);
    expect(young.code, young.stderr).toBe(0);
    expect(young.stdout).toMatch(/\b0\b/);
    ok(await w.run(["run", "--audit", "What is 2 + 2?"]), "run");
    expect(w.server.requests).toHaveLength(2); // both replies still cached

    const all = await w.run(["cache", "clear"]);
    expect(all.code, all.stderr).toBe(0);
    expect(all.stdout).toMatch(/\b2\b/);
    expect(all.stdout).toMatch(/remov/i);
    ok(await w.run(["run", "--audit", "What is 2 + 2?"]), "run");
    expect(w.server.requests).toHaveLength(4); // asked again

    const json = await w.run(["cache", "clear", "--json"]);
    expect(JSON.parse(json.stdout)).toMatchObject({ removed: 2 });
    const none = await w.run(["cache", "clear"]);
    expect(none.stdout).toMatch(/\b0\b/);

    const bad = await w.run(["cache", "clear", "--older-than", "yesterday"]);
    expect(bad.code).toBe(2);
    expect(errorLine(bad)).toContain("--older-than");
  });

  it("issue plan --replay answers from the cache with no network call; a miss exits 1 without touching the network", async () => {
    w = await holdWorld();
    const first = await w.newIssue(TITLE, BODY);
    expect(planJson(await w.run(["issue", "plan", first, "--json"])).calls).toBe(19);
    const sent = w.server.requests.length;

    // the same issue text again: every request is identical, so --replay has them all
    const twin = await w.newIssue(TITLE, BODY);
    const replayed = planJson(await w.run(["issue", "plan", twin, "--replay", "--json"]));
    expect(replayed.status).toBe("ready");
    expect(replayed.calls).toBe(0);
    expect(w.server.requests).toHaveLength(sent);

    const other = await w.newIssue("Support custom date formatting in CSV export", "Users pick a strftime pattern.");
    const miss = await w.run(["issue", "plan", other, "--replay"]);
    expect(miss.code).toBe(1);
    expect(errorLine(miss)).toMatch(/replay/);
    expect(w.server.requests).toHaveLength(sent);
    const labels = await labelsOf(other);
    for (const t of TRANSIENT_LABELS) expect(labels).not.toContain(t);

    const both = await w.run(["issue", "plan", other, "--no-cache", "--replay"]);
    expect(both.code).toBe(2);
    errorLine(both);
  });

  it("issue plan --no-cache asks the network again and replaces; --verbose puts every call on stderr", async () => {
    w = await holdWorld();
    const first = await w.newIssue(TITLE, BODY);
    ok(await w.run(["issue", "plan", first, "--json"]), "plan");
    const sent = w.server.requests.length;
    expect(sent).toBe(19);

    const twin = await w.newIssue(TITLE, BODY);
    const fresh = planJson(await w.run(["issue", "plan", twin, "--no-cache", "--json"]));
    expect(fresh.calls).toBe(19);
    expect(w.server.requests).toHaveLength(2 * sent);

    const third = await w.newIssue(TITLE, BODY);
    const verbose = await w.run(["issue", "plan", third, "--verbose"]);
    expect(verbose.code, verbose.stderr).toBe(0);
    const callLines = linesOf(verbose.stderr).filter((l) => /^dissent: call /.test(l));
    expect(callLines, verbose.stderr).toHaveLength(19);
    for (const role of PIPELINE_ROLES)
      expect(
        callLines.some((l) => l.includes(role)),
        role,
      ).toBe(true);
    expect(w.server.requests).toHaveLength(2 * sent); // all from the cache
  });
});

describe("CONTRACT r2: issue show --artifact and issue label", () => {
  it("issue show ID --artifact brief|shape|plan|acceptance_criteria prints that artifact of the latest cycle", async () => {
    w = await holdWorld();
    const id = await w.newIssue(TITLE, BODY);
    const unplanned = await w.run(["issue", "show", id, "--artifact", "plan"]);
    expect(unplanned.code).not.toBe(0);
    errorLine(unplanned);

    ok(await w.run(["issue", "plan", id]), "plan");
    const artifact = async (name: string) => ok(await (w as HoldWorld).run(["issue", "show", id, "--artifact", name]), `--artifact ${name}`).stdout;
    expect(await artifact("brief")).toBe(`${defaultArtifact("discover.brief").trimEnd()}\n`);
    expect(await artifact("shape")).toBe(`${defaultArtifact("shape.writer").trimEnd()}\n`);
    expect(await artifact("plan")).toBe(`${defaultArtifact("planner").trimEnd()}\n`);
    expect(await artifact("acceptance_criteria")).toContain("The change is covered by an automated test.");

    const bad = await w.run(["issue", "show", id, "--artifact", "diagram"]);
    expect(bad.code).toBe(2);
    expect(errorLine(bad)).toContain("--artifact");
  });

  it("issue label ID --add/--remove edits labels through the transition table; illegal moves are one-line usage errors", async () => {
    w = await holdWorld();
    const id = await w.newIssue(TITLE, BODY);

    const illegal = await w.run(["issue", "label", id, "--add", "dissent-ready"]);
    expect(illegal.code).toBe(2);
    expect(errorLine(illegal)).toContain("dissent-ready");
    expect(await labelsOf(id)).toEqual(["dissent-find"]);

    ok(await w.run(["issue", "label", id, "--add", "team-comments"]), "add");
    expect((await labelsOf(id)).sort()).toEqual(["dissent-find", "team-comments"]);
    ok(await w.run(["issue", "label", id, "--remove", "team-comments"]), "remove");
    expect(await labelsOf(id)).toEqual(["dissent-find"]);

    // a legal state move replaces the old state label
    const moved = await w.run(["issue", "label", id, "--add", "dissent-plan", "--json"]);
    expect(JSON.parse(ok(moved, "move").stdout)).toMatchObject({ labels: ["dissent-plan"] });
    expect(await labelsOf(id)).toEqual(["dissent-plan"]);
    const changes = (await w.events(id)).filter((e) => e.type === "LabelChanged");
    expect(changes.at(-1)).toMatchObject({ added: ["dissent-plan"], removed: ["dissent-find"] });

    ok(await w.run(["issue", "label", id, "--add", "dissent-fixed"]), "fixed");
    const back = await w.run(["issue", "label", id, "--add", "dissent-plan"]);
    expect(back.code).toBe(2);
    errorLine(back);
    expect(await labelsOf(id)).toEqual(["dissent-fixed"]);

    const two = await w.run(["issue", "label", id, "--add", "dissent-plan", "--add", "dissent-ready"]);
    expect(two.code).toBe(2);
    errorLine(two);
    const nothing = await w.run(["issue", "label", id]);
    expect(nothing.code).toBe(2);
    errorLine(nothing);
  });
});

describe("CONTRACT r2: the same-model warning", () => {
  it("run --audit with executor and challenger on the same provider:model: one warning line on stderr", async () => {
    w = await holdWorld(
      { "same-model": (req) => (req.body.response_format ? JSON.stringify({ concerns: [], verdict: "pass" }) : "The answer is 4.") },
      { routes: { executor: "local:same-model", challenger: "local:same-model" } },
    );
    const r = await w.run(["run", "--audit", "What is 2 + 2?"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("The answer is 4.\n");
    const lines = linesOf(r.stderr);
    expect(lines, r.stderr).toHaveLength(1);
    expect(lines[0]).toMatch(/^dissent: warning: /);
    expect(lines[0]).toContain("same-model");
  });

  it("run --audit on different models: no warning", async () => {
    w = await holdWorld();
    const r = await w.run(["run", "--audit", "What is 2 + 2?"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe("");
  });

  it("issue plan: a producer and every critic of its stage on one model → one warning line; some critics on it → none", async () => {
    w = await holdWorld(
      {},
      {
        routes: {
          "spec.ac_generator": "local:samey",
          "spec.judge": "local:samey",
          "discover.brief": "local:brief-and-one",
          assumption_surfacer: "local:brief-and-one",
        },
      },
    );
    const id = await w.newIssue(TITLE, BODY);
    const r = await w.run(["issue", "plan", id, "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const warned = warnings(r.stderr);
    expect(warned, r.stderr).toHaveLength(1);
    expect(warned[0]).toContain("samey");
    expect(warned[0]).toMatch(/spec/);
  });

  it("issue plan with every role on its own model: no warning", async () => {
    w = await holdWorld();
    const id = await w.newIssue(TITLE, BODY);
    const r = await w.run(["issue", "plan", id]);
    expect(r.code, r.stderr).toBe(0);
    expect(warnings(r.stderr)).toEqual([]);
  });
});
