import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createAnthropic } from "@ai-sdk/anthropic";
import { afterEach, describe, expect, it } from "vitest";
import { runAudit } from "../../src/index.js";

/**
 * docs/library.md: runAudit takes AI SDK LanguageModels of "any provider" and is the "same gate"
 * as the CLI; §3: the challenger gets "no tools (the request carries no tools)"; §2: structured
 * replies are asked for "never by tool calls". The CLI honours this for Anthropic (it asks by
 * prompt), but runAudit's fixed router asks every model for `responseFormat: json + schema`,
 * which @ai-sdk/anthropic turns into a forced `json` tool for models without native structured
 * output (claude-3*, claude-sonnet-4-0, claude-opus-4-0, proxies with other ids, …).
 */
interface Seen {
  body: Record<string, unknown>;
}
let server: Server | undefined;
afterEach(async () => {
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  server = undefined;
});

async function fakeAnthropic(reply: (n: number) => string): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>;
    const n = seen.push({ body }) - 1;
    res.writeHead(200, { "content-type": "application/json" });
    res.end(
      JSON.stringify({
        id: `msg_${n}`,
        type: "message",
        role: "assistant",
        model: body.model,
        content: [{ type: "text", text: reply(n) }],
        stop_reason: "end_turn",
        stop_sequence: null,
        usage: { input_tokens: 5, output_tokens: 5 },
      }),
    );
  });
  await new Promise<void>((r) => server?.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, seen };
}

describe("runAudit over an Anthropic challenger (docs/configuration.md, §3, §5)", () => {
  it("the challenger request carries no tools", async () => {
    const { url, seen } = await fakeAnthropic((n) => (n === 0 ? "A draft." : '{"verdict":"pass","concerns":[]}'));
    const anthropic = createAnthropic({ baseURL: url, apiKey: "test-key-not-secret" });
    const model = anthropic("claude-3-5-haiku-20241022");
    const out = await runAudit({ executor: model, challenger: model, prompt: "Hi", maxRetries: 0 });
    expect(seen).toHaveLength(2);
    const challengerRequest = seen[1]?.body ?? {};
    // Today: tools: [{ name: "json", … }] and tool_choice: { type: "any" | "tool" }.
    expect(challengerRequest.tools).toBeUndefined();
    expect(challengerRequest.tool_choice).toBeUndefined();
    expect(out.final_output).toBe("A draft.");
  });
});
