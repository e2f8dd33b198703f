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

/** The models it answers as (GET /v1/models lists them, as an OpenAI-compatible server does). */
const MODELS = [
  "default",
  "executor",
  "challenger",
  "complexity_gate",
  "discover.brief",
  "shape.writer",
  "planner",
  "plan.tester",
  "plan.risk_skeptic",
  "spec.ac_generator",
  "verifier",
];
/** A request body is read up to this size; a larger one is refused (413). */
const MAX_BODY = 8 * 1024 * 1024;

const send = (res, status, value) => {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(value));
};

const server = createServer(async (req, res) => {
  if (req.method === "GET" && req.url?.endsWith("/v1/models")) {
    return send(res, 200, { object: "list", data: MODELS.map((id) => ({ id, object: "model", created: 0, owned_by: "demo" })) });
  }
  if (!req.url?.endsWith("/chat/completions")) return send(res, 404, { error: { message: "only /v1/chat/completions and /v1/models are served" } });
  let body = "";
  for await (const chunk of req) {
    body += chunk;
    if (body.length > MAX_BODY) return send(res, 413, { error: { message: `request body over ${MAX_BODY} bytes` } });
  }
  let request;
  try {
    request = JSON.parse(body);
  } catch {
    return send(res, 400, { error: { message: "the request body is not JSON" } });
  }
  const { model, messages = [] } = request;
  const content = answer(model, messages);
  send(res, 200, {
    id: "demo",
    object: "chat.completion",
    created: 0,
    model,
    choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
    usage: { prompt_tokens: Math.ceil(body.length / 4), completion_tokens: Math.ceil(content.length / 4), total_tokens: 0 },
  });
});
// PORT=0 takes any free port; the line below names the one it got.
server.listen(Number(process.env.PORT ?? 8787), "127.0.0.1", () =>
  console.error(`demo model server on http://127.0.0.1:${server.address().port}/v1 (Ctrl-C to stop)`),
);
