// A stand-in OpenAI-compatible model server for trying dissent without an LLM.
// It answers by model name with canned replies, so every path of the product can be seen:
//   node examples/demo-server.mjs            (listens on 127.0.0.1:8787, or $PORT)
// Point dissent at it with examples/demo.config.yaml. Use Ollama, vLLM or an API for real work.
import { createServer } from "node:http";

const DRAFT = "Paracetamol is completely safe at any dose, and most adults can take 8 g a day.";
const REVISED =
  "Paracetamol is safe for most adults at the labelled dose; the usual maximum is 4 g in 24 hours, and lower for some people. Check the label or ask a pharmacist before exceeding it.";
const AUDIT = {
  verdict: "needs_work",
  concerns: [
    {
      category: "factual_risk",
      severity: "critical",
      evidence: "most adults can take 8 g a day",
      concern: "8 g a day is twice the usual maximum daily dose.",
      suggested_fix: "State the labelled maximum and advise checking it.",
    },
    { category: "unverifiable_claim", severity: "high", evidence: "completely safe at any dose", concern: "No medicine is safe at any dose." },
  ],
};

function answer(model, messages) {
  const last = messages.at(-1)?.content ?? "";
  switch (model) {
    case "executor":
      return messages.length > 2 ? REVISED : DRAFT;
    case "challenger":
      return "```json\n" + JSON.stringify(AUDIT, null, 2) + "\n```";
    case "complexity_gate":
      return "LOAD-BEARING";
    case "discover.brief":
    case "shape.writer":
      return `# ${model}\n\nThe problem: the HTTP client gives up on the first 503.\n\n(Written by the demo server.)`;
    case "planner":
      return messages.length > 1 && last.includes("blocked")
        ? "# Plan\n\n1. Wrap `request()` in a retry loop (max 3, exponential backoff, honour Retry-After).\n2. Test: a 503 then a 200 succeeds; three 503s fail with the last error; a 429 waits Retry-After.\n\n## Decisions\n\n- The missing test: step 2 adds the three tests."
        : "# Plan\n\n1. Wrap `request()` in a retry loop.\n2. Ship it.";
    case "plan.tester":
      return JSON.stringify({
        findings: last.includes("Ship it.")
          ? [
              {
                evidence: "Wrap `request()` in a retry loop.",
                severity: "CRITICAL",
                category: "test_gap",
                concern: "No test shows a retried request succeeding or giving up.",
              },
            ]
          : [],
      });
    case "plan.risk_skeptic":
      return JSON.stringify({ findings: [{ severity: "MEDIUM", category: "risk", concern: "Retrying non-idempotent POSTs can duplicate writes." }] });
    case "spec.ac_generator":
      return JSON.stringify({
        acceptance_criteria: [
          "A 503 followed by a 200 returns the 200 response",
          "Three 503s in a row raise the last error",
          "A 429 with Retry-After: 2 waits two seconds before retrying",
        ],
      });
    case "verifier":
      // The second opinion on a lone HIGH: this demo's councils raise none, so it is never asked.
      return JSON.stringify({ evidence: "", reason: "The demo server has no opinion of its own.", verdict: "refute" });
    default:
      return JSON.stringify({ findings: [] });
  }
}

const server = createServer(async (req, res) => {
  let body = "";
  for await (const chunk of req) body += chunk;
  if (!req.url?.endsWith("/chat/completions")) {
    res.writeHead(404, { "content-type": "application/json" });
    return res.end(JSON.stringify({ error: { message: "only /v1/chat/completions is served" } }));
  }
  const { model, messages } = JSON.parse(body);
  const content = answer(model, messages);
  res.writeHead(200, { "content-type": "application/json" });
  res.end(
    JSON.stringify({
      id: "demo",
      object: "chat.completion",
      created: 0,
      model,
      choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
      usage: { prompt_tokens: Math.ceil(body.length / 4), completion_tokens: Math.ceil(content.length / 4), total_tokens: 0 },
    }),
  );
});
const port = Number(process.env.PORT ?? 8787);
server.listen(port, "127.0.0.1", () => console.error(`demo model server on http://127.0.0.1:${port}/v1 (Ctrl-C to stop)`));
