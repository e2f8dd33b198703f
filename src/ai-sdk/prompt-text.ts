import type { LanguageModelV3Message, LanguageModelV3Prompt } from "@ai-sdk/provider";

/**
 * A prompt that carries tool calls or tool results is not audited (ADR-014): the challenger gets
 * exactly the prompt and the draft (ADR-009 §2), never tools, so it cannot ground claims made from
 * a tool's output — it would flag them as unverifiable, or pass what it cannot see.
 */
export function promptHoldsTools(prompt: LanguageModelV3Prompt): boolean {
  return prompt.some((m) => m.role === "tool" || (m.role === "assistant" && m.content.some((p) => p.type === "tool-call" || p.type === "tool-result")));
}

const LABEL: Record<LanguageModelV3Message["role"], string> = { system: "System", user: "User", assistant: "Assistant", tool: "Tool" };

/** The text of one message: its text parts, a file named by its type; reasoning is left out. */
function messageText(m: LanguageModelV3Message): string {
  if (m.role === "system") return m.content;
  const out: string[] = [];
  for (const p of m.content) {
    if (p.type === "text") out.push(p.text);
    else if (p.type === "file") out.push(`[file ${p.mediaType}${p.filename ? ` ${p.filename}` : ""}]`);
  }
  return out.join("");
}

/**
 * The challenger's `prompt` (ADR-009 §2) from an AI SDK prompt: a lone user message is its text; a
 * conversation (a system message included) is its turns, each under its speaker, so instructions
 * and facts the app gave the model are what the draft is audited against.
 */
export function promptText(prompt: LanguageModelV3Prompt): string {
  const only = prompt.length === 1 ? prompt[0] : undefined;
  if (only?.role === "user") return messageText(only);
  return prompt.map((m) => `${LABEL[m.role]}:\n${messageText(m)}`).join("\n\n");
}
