// The adversarial pipeline embedded in your own code (a service, a GitHub Action): createDissent gives
// the CLI's wiring — config, store, tracker, the one model door — as a library.
//
//   npx tsx examples/embed-pipeline.ts      # Ollama on 127.0.0.1:11434, a local tracker under ./.dissent
//   OLLAMA_BASE_URL=http://gpu-box:11434/v1 npx tsx examples/embed-pipeline.ts
//
// Reference: docs/library.md (createDissent) and docs/configuration.md (routes).
import { BudgetExceeded, createDissent, ProviderError, type PipelineProgress } from "dissent";

// Two model families: Qwen writes (the executor, every stage's producer, the complexity gate — all
// fall through to `default`), Llama judges (the challenger, every critic and the plan reviewer). A
// model reviewing its own work shares its blind spots; dissent warns when a stage's producer and
// all its critics are the same model.
const judge = { primary: "local:llama3.1:8b" };
const JUDGING_ROLES = [
  "challenger",
  "assumption_surfacer",
  "discovery", // discovery.problem_sharpener, .existing_solution_hunter, .cheapest_test_advocate
  "shape.challenger",
  "shape.user_advocate",
  "shape.tech_lead",
  "shape.product_strategist",
  "plan", // plan.builder, plan.tester, plan.risk_skeptic (the producer, planner, is not under plan.)
  "spec.judge",
  "plan_reviewer",
];

const dissent = createDissent({
  // A config file path, or the YAML's content as an object (default: ./dissent.config.yaml, else built-in defaults).
  config: {
    providers: { local: { type: "openai-compatible", base_url: process.env.OLLAMA_BASE_URL ?? "http://127.0.0.1:11434/v1", max_concurrency: 1 } },
    routes: {
      default: { primary: "local:qwen3:8b" },
      ...Object.fromEntries(JUDGING_ROLES.map((role) => [role, judge])),
    },
    tracker: { type: "local" },
    budget: { max_calls_per_issue: 40 },
  },
  onWarning: (message) => console.error(`warning: ${message}`),
});

const progress = (p: PipelineProgress) => {
  if (p.kind === "stage-done") console.error(`stage ${p.run.phase}: ${p.run.outcome} after ${p.run.rounds} round(s)`);
};

try {
  const issue = await dissent.issues.create({
    title: "Retry idempotent HTTP requests on 503",
    body: "The client gives up on the first 503. Retry GET/PUT/DELETE with backoff, honour Retry-After, never retry POST.",
    labels: ["dissent-load-bearing"],
  });
  const plan = await dissent.planIssue(issue.id, { onProgress: progress });
  console.log(`#${plan.issue}: ${plan.status} (${plan.route}), ${plan.calls} model calls`);
  console.log(plan.plan);
  for (const c of plan.pending_concerns) console.log(`- [${c.severity}] ${c.concern} (must be addressed by ${c.must_address_by})`);
} catch (e) {
  // Errors carry data to branch on; the CLI maps them to exit codes, a library user decides.
  if (BudgetExceeded.isInstance(e)) console.error(`budget: ${e.used} of ${e.max} ${e.unit} used`);
  else if (ProviderError.isInstance(e)) console.error(`${e.provider} (${e.model}) failed: ${e.kind} after ${e.attempts} attempt(s)`);
  else throw e;
} finally {
  await dissent.close();
}
