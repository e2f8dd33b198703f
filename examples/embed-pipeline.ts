// The adversarial pipeline embedded in your own code (a service, a GitHub Action): createDissent gives
// the CLI's wiring — config, store, tracker, the one model door — as a library.
//
//   npx tsx examples/embed-pipeline.ts      # Ollama on 127.0.0.1:11434, a local tracker under ./.dissent
import { BudgetExceeded, createDissent, ProviderError, type PipelineProgress } from "dissent";

const dissent = createDissent({
  // A config file path, or the YAML's content as an object (default: ./dissent.config.yaml, else built-in defaults).
  config: {
    providers: { local: { type: "openai-compatible", base_url: "http://127.0.0.1:11434/v1", max_concurrency: 1 } },
    routes: {
      default: { primary: "local:qwen3:8b" },
      challenger: { primary: "local:llama3.1:8b" },
      plan_reviewer: { primary: "local:llama3.1:8b" },
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
