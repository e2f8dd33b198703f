import { ROLES } from "./world.js";

/** A config routing every pipeline role to a model named after it, so a fake server can answer by `model`. */
export function rolesConfig(baseUrl: string, extra = ""): string {
  return [
    "providers:",
    `  local: { type: openai-compatible, base_url: "${baseUrl}" }`,
    "routes:",
    '  default: { primary: "local:default" }',
    ...ROLES.map((r) => `  ${r}: { primary: "local:${r}" }`),
    "retry_backoff_ms: 10",
    extra,
  ].join("\n");
}

/** Replies of a council that agrees with everything, by model (= role) name. */
export function agreeableReply(model: string): string {
  if (model === "complexity_gate") return "LOAD-BEARING";
  if (["discover.brief", "shape.writer", "planner"].includes(model)) return `# ${model}\n\nArtifact written by ${model}.`;
  if (model === "spec.ac_generator") return JSON.stringify({ acceptance_criteria: ["A user sees the retry succeed"] });
  if (model === "verifier") return JSON.stringify({ evidence: "", reason: "Not a defect of this artifact.", verdict: "refute" });
  return JSON.stringify({ findings: [] });
}
