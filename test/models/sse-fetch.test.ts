import { describe, expect, it } from "vitest";
import { INCOMPLETE_STREAM, sseToCompletion } from "../../src/models/sse-fetch.js";

const chunk = (o: unknown) => `data: ${JSON.stringify(o)}\n\n`;

describe("sseToCompletion", () => {
  it("folds a chat-completions stream into one completion, with usage", () => {
    const body =
      chunk({ id: "c1", model: "m", created: 5, choices: [{ index: 0, delta: { role: "assistant", content: "" } }] }) +
      chunk({ id: "c1", choices: [{ index: 0, delta: { content: "Hel" } }] }) +
      chunk({ id: "c1", choices: [{ index: 0, delta: { content: 'lo\n{"a": 1}' } }] }) +
      chunk({ id: "c1", choices: [{ index: 0, delta: {}, finish_reason: "stop" }] }) +
      chunk({ id: "c1", choices: [], usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } }) +
      "data: [DONE]\n\n";
    expect(sseToCompletion(body)).toEqual({
      id: "c1",
      object: "chat.completion",
      created: 5,
      model: "m",
      choices: [{ index: 0, message: { role: "assistant", content: 'Hello\n{"a": 1}' }, finish_reason: "stop" }],
      usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
    });
  });

  it("keeps reasoning apart from content, and tolerates CRLF and junk lines", () => {
    const body =
      ": keep-alive\r\n\r\n" +
      chunk({ choices: [{ index: 0, delta: { reasoning_content: "hmm" } }] }).replace(/\n/g, "\r\n") +
      "data: {not json}\r\n\r\n" +
      chunk({ choices: [{ index: 0, delta: { content: "answer" } }] });
    const c = sseToCompletion(body) as { choices: { message: { content: string; reasoning_content?: string }; finish_reason: string }[] };
    expect(c.choices[0]?.message).toEqual({ role: "assistant", content: "answer", reasoning_content: "hmm" });
  });

  it("a stream that stopped with neither a finish reason nor [DONE] is marked unfinished, never 'stop' (docs/configuration.md)", () => {
    const cut = chunk({ choices: [{ index: 0, delta: { content: "half an ans" } }] });
    const finishReason = (body: string) => (sseToCompletion(body) as { choices: { finish_reason: string }[] }).choices[0]?.finish_reason;
    expect(finishReason(cut)).toBe(INCOMPLETE_STREAM);
    expect(finishReason(`${cut}data: [DONE]\n\n`)).toBe("stop");
  });
});
