// Every answer of an existing AI SDK app audited (ADR-008): wrap the model once, call it as before.
//
//   OPENAI_API_KEY=… ANTHROPIC_API_KEY=… npx tsx examples/ai-sdk-middleware.ts     # API models
//   npx tsx examples/ai-sdk-middleware.ts                                          # Ollama on 127.0.0.1:11434
//   OLLAMA_BASE_URL=http://gpu-box:11434/v1 npx tsx examples/ai-sdk-middleware.ts   # any OpenAI-compatible server
//
// The challenger should be of another model family than the model it audits: a model reviewing
// itself is weak dissent. Reference: docs/library.md.
import { createAnthropic } from "@ai-sdk/anthropic";
import { createOpenAI } from "@ai-sdk/openai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { generateText, streamText, wrapLanguageModel } from "ai";
import { auditMiddleware, auditOf, type AuditReport } from "dissent/ai-sdk";

function models() {
  if (process.env.OPENAI_API_KEY && process.env.ANTHROPIC_API_KEY) {
    return { model: createOpenAI()("gpt-4o-mini"), challenger: createAnthropic()("claude-3-5-haiku-latest") };
  }
  // supportsStructuredOutputs: the challenger's reply schema goes to the server as json_schema (Ollama,
  // vLLM, llama.cpp and LM Studio all take it); without it the AI SDK falls back to plain JSON mode
  // and prints a warning on every audit.
  const ollama = createOpenAICompatible({
    name: "ollama",
    baseURL: process.env.OLLAMA_BASE_URL ?? "http://127.0.0.1:11434/v1",
    supportsStructuredOutputs: true,
  });
  return { model: ollama("qwen3:8b"), challenger: ollama("llama3.1:8b") }; // Qwen writes, Llama audits
}

const { model, challenger } = models();

// The three lines: import auditMiddleware (above), wrap the model, use the wrapped model.
const audited = wrapLanguageModel({
  model,
  middleware: auditMiddleware({
    challenger,
    policies: ["No medical dosing advice without telling the reader to check the label or a pharmacist."],
    onAudit: (report: AuditReport) => {
      const m = report.audit_meta;
      if (report.skipped) console.error(`[audit] not audited: ${report.skipped}`);
      else console.error(`[audit] ${m.challenger_status} · verdict ${m.audit_verdict} · revised ${m.revised} · ${m.concerns} grounded concern(s)`);
      if (m.challenger_status === "failed") console.error(`[audit] challenger failed open: ${m.challenger_error}`);
    },
  }),
});

// generateText: the reply is the draft; on needs_work the text you get is the one revision.
const answer = await generateText({ model: audited, prompt: "How much paracetamol can an adult take in a day?" });
console.log(answer.text);
console.log(auditOf(answer.providerMetadata)?.audit_meta); // verdict, revised, challenger_status …

// streamText: the draft is buffered and audited, then the final text streams.
const stream = streamText({ model: audited, prompt: "Explain the CAP theorem in three sentences." });
for await (const chunk of stream.textStream) process.stdout.write(chunk);
process.stdout.write("\n");
console.log(`tokens over every call (draft, challenger, revision): ${(await stream.usage).totalTokens}`);
