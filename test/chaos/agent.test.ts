/**
 * Chaos, the coding agent (issue 32): issues implemented one after another by a hostile agent
 * (test/fixtures/agents/hostile*.sh) whose every attempt does, at seeded random, one of the things a
 * hostile agent does — reads dissent's environment through /proc and commits what it found, plants
 * hooks and an fsmonitor, plants a link where the next task file goes, overwrites the checkout's
 * ignored .env, moves the user's refs, leaves a setsid daemon on its pipes, or nothing — under
 * bubblewrap or unsandboxed (drawn per issue), and now and then a dissent killed with -9 while its
 * agent (one that ignores SIGTERM and never ends) works, then resumed. Then the invariants: the
 * user's checkout changed only in a run that said so (escaped, unsandboxed; never under bubblewrap),
 * no hook of the agent's ran, nothing written through its link, no key in any output, event, store
 * file or model request, every attempt that committed the key flagged, nothing of any agent left
 * running, never two agents of an issue at once, documented exit codes and one-line errors, every
 * issue in a documented state.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { agentProcesses, gitIn, HOSTILE_AGENT, implementWorld } from "../support/implement-world.js";
import { startDissent, until } from "../support/proc.js";
import { bytesUnder, check, injected, report, stderrHolds, stream, tally } from "./harness.js";

vi.setConfig({ testTimeout: 900_000 });

const KEY = "hunter2-chaos-agent-secret-4d2b";
const ISSUES = Number(process.env.DISSENT_CHAOS_AGENT_ISSUES ?? 8);
const BEHAVIOURS = ["environ", "hook", "task-link", "ignored", "refs", "daemon", "none"] as const;
const ENV_FILE = "LOCAL_SETTING=the user's own\n";

const t = tally("agent");
afterAll(() => report(t));

describe("chaos: a hostile coding agent, at random, sandboxed or not, its dissent killed now and then", () => {
  it("every invariant holds", async () => {
    const pick = stream("agent", "behaviours");
    const chaos = stream("agent", "chaos");
    const w = await implementWorld({ mode: "unused", command: `sh ${HOSTILE_AGENT}`, env: { TEST_PROVIDER_KEY: KEY } });
    const config = join(w.dir, "dissent.config.yaml");
    writeFileSync(config, readFileSync(config, "utf8").replace(/base_url: "([^"]+)" \}/, 'base_url: "$1", api_key_env: TEST_PROVIDER_KEY }'));
    const plan = join(w.dir, "agent", "plan.txt");
    const env = { HOSTILE_PLAN: plan, TEST_PROVIDER_KEY: KEY };
    const outputs: string[] = [];
    const userState = () => ({ env: readFileSync(join(w.repo, ".env"), "utf8"), refs: gitIn(w.repo, "for-each-ref", "--format=%(refname) %(objectname)") });
    const restore = (before: { refs: string }) => {
      // A person looks at what the agent did, and puts the checkout back.
      writeFileSync(join(w.repo, ".env"), ENV_FILE);
      gitIn(w.repo, "checkout", "--quiet", "--force", "main");
      for (const line of before.refs.trim().split("\n")) {
        const [ref = "", sha = ""] = line.split(" ");
        gitIn(w.repo, "update-ref", ref, sha);
      }
      for (const ref of gitIn(w.repo, "for-each-ref", "--format=%(refname)").trim().split("\n"))
        if (!before.refs.includes(`${ref} `) && !ref.startsWith("refs/heads/dissent/")) gitIn(w.repo, "update-ref", "-d", ref);
      gitIn(w.repo, "reset", "--quiet", "--hard", "main");
    };
    try {
      for (let n = 0; n < ISSUES; n++) {
        const sandbox = chaos.pick(["bubblewrap", "none"] as const);
        writeFileSync(config, readFileSync(config, "utf8").replace(/sandbox: \w+/, `sandbox: ${sandbox}`));
        const id = await w.readyIssue(`Add a sum function (chaos ${n + 1})`);
        const where = `issue ${id} (${sandbox})`;
        const drawn = [1, 2, 3, 4].map((a) => ({ attempt: a, b: pick.pick(BEHAVIOURS) }));
        // Now and then — and at least once a run — the dissent is killed while its agent works.
        const kill = chaos.chance(0.3) || (n === ISSUES - 1 && !t.faults.kill_9_mid_attempt);
        if (kill) drawn[0] = { attempt: 1, b: "survivor" as (typeof BEHAVIOURS)[number] };
        writeFileSync(plan, `${existsSync(plan) ? readFileSync(plan, "utf8") : ""}${drawn.map((d) => `${id} ${d.attempt} ${d.b}\n`).join("")}`);
        for (const d of drawn) injected(t, `${d.b}_${sandbox}`);
        const before = userState();

        if (kill) {
          injected(t, "kill_9_mid_attempt");
          const ticks = `${w.agentLog}.ticks-${id}`;
          const run = startDissent(["issue", "implement", id], { cwd: w.dir, env: { DISSENT_HOME: w.home, AGENT_LOG: w.agentLog, ...env } });
          await until(() => existsSync(ticks) && readFileSync(ticks, "utf8").includes("tick"), 120_000);
          run.child.kill("SIGKILL");
          const r = await run.done;
          t.runs++;
          check(t, r.signal === "SIGKILL", `${where}: the killed run ended ${r.code}/${r.signal}`);
          if (sandbox === "bubblewrap") {
            const gone = await until(() => agentProcesses(w.agentLog).length === 0, 15_000).then(
              () => true,
              () => false,
            );
            check(t, gone, `${where}: the agent outlived its killed dissent under bubblewrap`);
          }
          writeFileSync(`${w.agentLog}.release-${id}`, "");
        }
        const r = await w.run(["issue", "implement", id, "--json"], { env, timeoutMs: 300_000 });
        t.runs++;
        outputs.push(r.stdout, r.stderr);
        check(t, r.code === 0 || r.code === 1, `${where}: exit ${r.code}: ${r.stderr.slice(0, 500)}`);
        // `issue implement` reports each attempt on stderr as it ends (docs/implement.md#output); every other line is an error or a warning.
        stderrHolds(t, r.stderr.replace(/^dissent: attempt \d+ .*\n/gm, ""), where);

        const events = (await w.run(["events", "--issue", id, "--json"])).stdout
          .split("\n")
          .filter(Boolean)
          .map((l) => JSON.parse(l) as { type: string; attempt?: number; outcome?: string; secrets?: number });
        outputs.push(JSON.stringify(events));
        const attempts = events.filter((e) => e.type === "ImplementAttempt");
        const escaped = attempts.some((e) => e.outcome === "escaped");
        check(t, r.code === 0 || escaped, `${where}: exit 1 without an escaped attempt: ${r.stderr.slice(0, 300)}`);

        // The user's checkout: changed only where the run said so, and never under bubblewrap.
        const after = userState();
        const changed =
          after.env !== before.env ||
          after.refs.replace(/^refs\/heads\/dissent\/\S+ \S+\n/gm, "") !== before.refs.replace(/^refs\/heads\/dissent\/\S+ \S+\n/gm, "");
        check(t, !changed || (sandbox === "none" && escaped), `${where}: the user's checkout changed (${after.env.trim()}) and the run did not stop`);
        if (changed) restore(before);

        // The key: flagged where the agent committed it (unsandboxed), never seen by a sandboxed one.
        for (const a of attempts) {
          const b = drawn.find((d) => d.attempt === a.attempt)?.b;
          if (b === "environ" && sandbox === "none" && a.outcome !== "escaped")
            check(t, (a.secrets ?? 0) > 0, `${where}: attempt ${a.attempt} committed the key unflagged`);
          if (sandbox === "bubblewrap") check(t, a.secrets === undefined, `${where}: a sandboxed agent found the key (attempt ${a.attempt})`);
        }

        // Nothing of the agent left; never two of an issue's agents at once; no hook ran; no link followed.
        check(t, agentProcesses(w.agentLog).length === 0, `${where}: agent processes left running: ${agentProcesses(w.agentLog).join(", ")}`);
        const ticks = `${w.agentLog}.ticks-${id}`;
        if (existsSync(ticks)) {
          const lines = readFileSync(ticks, "utf8").trim().split("\n");
          const start = lines.findIndex((l) => l.startsWith("start "));
          check(
            t,
            start < 0 || lines.slice(start + 1).every((l) => !l.startsWith("tick ")),
            `${where}: the killed run's agent ticked on beside the resumed one`,
          );
        }
        const agentDir = join(w.agentLog, "..");
        check(
          t,
          readdirSync(agentDir).every((f) => !f.includes(".hook-")),
          `${where}: a hook of the agent's ran`,
        );
        check(t, !existsSync(`${w.agentLog}.link-target`), `${where}: dissent wrote through the agent's link`);
        const labels = (JSON.parse((await w.run(["issue", "show", id, "--json"])).stdout) as { labels: string[] }).labels;
        check(t, labels.includes("dissent-review") || labels.includes("dissent-hitl"), `${where}: ended with labels ${labels.join(", ")}`);
      }

      // No key in any output, event, model request, or file of dissent's own (its store, tasks, wiki) —
      // the agent's clones and dissent's repositories hold what the agent committed, and nothing left the machine.
      const requests = w.double.requests.map((q) => JSON.stringify(q.body));
      check(
        t,
        [...outputs, ...requests].every((s) => !s.includes(KEY)),
        "the key reached an output, an event or a model",
      );
      for (const f of bytesUnder(w.home).filter((f) => !/\/(worktrees|git)\//.test(f.path)))
        check(t, !f.bytes.includes(Buffer.from(KEY)), `${f.path} holds the key`);
      check(t, !gitIn(w.origin, "branch", "--list").includes("dissent/"), "a branch was pushed");
    } finally {
      await w.close();
    }
    expect(t.violations).toEqual([]);
  });
});
