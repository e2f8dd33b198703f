/**
 * The OpenTelemetry GenAI semantic conventions dissent follows, by name (the same strings
 * @opentelemetry/semantic-conventions ships in its incubating entry; a test pins them).
 * Written out here so that loading telemetry never loads the whole conventions package.
 */

/** The version of the GenAI semantic conventions these names are taken from. */
export const SEMCONV_VERSION = "1.41.0";
export const SCHEMA_URL = `https://opentelemetry.io/schemas/${SEMCONV_VERSION}`;

export const GEN_AI = {
  OPERATION_NAME: "gen_ai.operation.name",
  PROVIDER_NAME: "gen_ai.provider.name",
  REQUEST_MODEL: "gen_ai.request.model",
  REQUEST_SEED: "gen_ai.request.seed",
  REQUEST_TEMPERATURE: "gen_ai.request.temperature",
  REQUEST_MAX_TOKENS: "gen_ai.request.max_tokens",
  USAGE_INPUT_TOKENS: "gen_ai.usage.input_tokens",
  USAGE_OUTPUT_TOKENS: "gen_ai.usage.output_tokens",
  /** Of the input tokens, those read from the provider's prompt cache (GenAI semantic conventions). */
  USAGE_CACHE_READ_INPUT_TOKENS: "gen_ai.usage.cache_read.input_tokens",
  /** Of the input tokens, those written to the provider's prompt cache (GenAI semantic conventions). */
  USAGE_CACHE_CREATION_INPUT_TOKENS: "gen_ai.usage.cache_creation.input_tokens",
  RESPONSE_FINISH_REASONS: "gen_ai.response.finish_reasons",
  OUTPUT_TYPE: "gen_ai.output.type",
  WORKFLOW_NAME: "gen_ai.workflow.name",
  SYSTEM_INSTRUCTIONS: "gen_ai.system_instructions",
  INPUT_MESSAGES: "gen_ai.input.messages",
  OUTPUT_MESSAGES: "gen_ai.output.messages",
  EVALUATION_NAME: "gen_ai.evaluation.name",
  EVALUATION_SCORE_LABEL: "gen_ai.evaluation.score.label",
  EVALUATION_SCORE_VALUE: "gen_ai.evaluation.score.value",
  EVALUATION_EXPLANATION: "gen_ai.evaluation.explanation",
} as const;

export const ERROR_TYPE = "error.type";

/** The event that carries a verdict or a vote. */
export const EVALUATION_RESULT_EVENT = "gen_ai.evaluation.result";

export const OPERATION = { CHAT: "chat", INVOKE_WORKFLOW: "invoke_workflow" } as const;

/** dissent's own attributes (outside the gen_ai namespace). */
export const DISSENT = {
  ROLE: "dissent.role",
  PROVIDER: "dissent.provider",
  ROUTE: "dissent.route",
  CACHED: "dissent.cached",
  ATTEMPTS: "dissent.attempts",
  COST_USD: "dissent.cost_usd",
  ISSUE_ID: "dissent.issue.id",
  RUN_ID: "dissent.run.id",
  STAGE: "dissent.stage",
  PHASE: "dissent.phase",
  ROUND: "dissent.round",
  BLOCKING: "dissent.round.blocking",
  OUTCOME: "dissent.stage.outcome",
  STATUS: "dissent.plan.status",
  ROUTE_KIND: "dissent.plan.route",
  FINDINGS: "dissent.findings",
  PARSE_ERROR: "dissent.parse_error",
} as const;
