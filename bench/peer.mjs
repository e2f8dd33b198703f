// node bench/peer.mjs [--runs N] [--baseline REV] (or PEER_BASELINE=REV npm run bench -- --only peer) — the gate against the bare AI SDK as a peer benchmark
// measures frameworks: three instant mock calls (a draft, an audit that asks for work, a revision),
// the same three by hand with `generateText`, and `runAudit` from the package entry. Part of
// `npm run bench`. With --baseline REV, that revision is built beside this one (a git worktree, this
// repo's node_modules) and its `runAudit` runs in the same process, interleaved with the others, so
// the before and after figures come from one run on one machine state (issue 31 item 9).
// Figures are CPU time per run (summed over the runs: what the machine's load does not move), with
// the median wall time beside it. Writes bench/results.peer.json and prints a table.
import { writeFileSync } from "node:fs";
import { generateText } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { bucket, buildBaseline, median, printTable, recorder, round, timed } from "./lib.mjs";

const args = process.argv.slice(2);
const flag = (name, fallback) => {
  const i = args.indexOf(name);
  return i === -1 ? fallback : args[i + 1];
};
const RUNS = Number(flag("--runs", 2000));
/** The revision to compare with: --baseline REV, or PEER_BASELINE=REV under `npm run bench`. */
const BASELINE = flag("--baseline", process.env.PEER_BASELINE || undefined);
const WARMUP = 1000;
/** The goal of issue 31 item 9: the gate at most 1.6× the same three calls by hand. */
const GOAL = 1.6;

// ------------------------------------------------------------------ the workload: three instant mock calls
const PROMPT = "At what temperature does water boil?";
const DRAFT = "Water boils at 100 degrees Celsius at sea level, always and everywhere, whatever the pressure.";
const REVISED = "Water boils at 100 degrees Celsius at sea level; at lower pressure it boils at a lower temperature.";
const WORK = JSON.stringify({
  concerns: [
    { evidence: "always and everywhere, whatever the pressure", category: "factual_risk", severity: "high", concern: "The boiling point depends on pressure." },
  ],
  verdict: "needs_work",
});
const usage = { inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 5, text: 5, reasoning: 0 } };
const result = (text) => ({ content: [{ type: "text", text }], finishReason: { unified: "stop", raw: "stop" }, usage, warnings: [] });
/** The AI SDK's own mock model, answering at once, as peer benchmarks use it; its call log is cleared each run (it would grow with the runs). */
function instant(id, answer) {
  const model = new MockLanguageModelV3({ provider: "bench", modelId: id, doGenerate: async (o) => result(answer(o)) });
  return model;
}
const exec = instant("exec", (o) => (o.prompt.some((m) => m.role === "assistant") ? REVISED : DRAFT));
const challenger = instant("chal", () => WORK);
const clearLogs = () => {
  exec.doGenerateCalls.length = 0;
  challenger.doGenerateCalls.length = 0;
};

/** The bare AI SDK: the same three calls by hand, as a peer benchmark writes them. */
async function bare() {
  const draft = await generateText({ model: exec, prompt: PROMPT });
  const audit = await generateText({ model: challenger, prompt: JSON.stringify({ prompt: PROMPT, draft: draft.text }) });
  await generateText({
    model: exec,
    messages: [
      { role: "user", content: PROMPT },
      { role: "assistant", content: draft.text },
      { role: "user", content: `Revise once: ${audit.text}` },
    ],
  });
  clearLogs();
}

/** `runAudit` from a built package entry. */
async function gateFrom(entry) {
  const { runAudit } = await import(entry);
  return async () => {
    await runAudit({ executor: exec, challenger, prompt: PROMPT });
    clearLogs();
  };
}

/** Interleaved: one run of each workload in turn, the order rotated every run (load falls on all alike). */
async function interleaved(fns, runs) {
  const b = fns.map(bucket);
  for (let i = 0; i < WARMUP; i++) for (const f of fns) await f();
  for (let i = 0; i < runs; i++) for (let k = 0; k < fns.length; k++) await timed(fns[(i + k) % fns.length], b[(i + k) % fns.length]);
  return b.map((x) => ({ cpu: x.cpu / runs, wall: median(x.wall) }));
}
/** Solo: each workload alone, in alternating blocks of 100 runs. */
async function solo(fns, runs) {
  const b = fns.map(bucket);
  for (let i = 0; i < WARMUP; i++) for (const f of fns) await f();
  for (let done = 0; done < runs; done += 100) for (let k = 0; k < fns.length; k++) for (let i = 0; i < 100; i++) await timed(fns[k], b[k]);
  return b.map((x) => ({ cpu: x.cpu / runs, wall: median(x.wall) }));
}

// ------------------------------------------------------------------ the rows
const { results, rows, record } = recorder({ runs: RUNS, node: process.version, date: new Date().toISOString() });
const baseline = BASELINE ? buildBaseline(BASELINE, "peer") : undefined;
try {
  const gate = await gateFrom("dissent");
  const before = baseline ? await gateFrom(baseline.entry) : undefined;
  const fns = before ? [bare, gate, before] : [bare, gate];
  for (const [mode, run] of [
    ["interleaved", interleaved],
    ["solo", solo],
  ]) {
    const [b, g, old] = await run(fns, RUNS);
    record(`peer_bare_${mode}_ms`, `bare AI SDK, 3 instant mock calls, ${mode} (CPU a run)`, b.cpu, "ms");
    record(`peer_gate_${mode}_ms`, `runAudit, 3 instant mock calls, ${mode} (CPU a run)`, g.cpu, "ms");
    const ratio = g.cpu / b.cpu;
    record(`peer_gate_ratio_${mode}`, `runAudit / bare AI SDK, ${mode} (CPU; wall ${round(g.wall / b.wall, 2)}×)`, ratio, "×", `≤ ${GOAL}`, ratio <= GOAL);
    results[`peer_gate_ratio_${mode}`].wall_ratio = round(g.wall / b.wall);
    if (old) {
      const was = old.cpu / b.cpu;
      record(`peer_baseline_ratio_${mode}`, `  the same at ${BASELINE} (before), ${mode} (CPU; wall ${round(old.wall / b.wall, 2)}×)`, was, "×");
      results[`peer_baseline_ratio_${mode}`].wall_ratio = round(old.wall / b.wall);
      results[`peer_baseline_ratio_${mode}`].baseline = BASELINE;
    }
  }
} finally {
  baseline?.cleanup();
}

writeFileSync(new URL("./results.peer.json", import.meta.url), `${JSON.stringify(results, null, 2)}\n`);
printTable(rows);
console.log("\nwritten: bench/results.peer.json");
