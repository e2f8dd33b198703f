import type { LanguageModelV3Prompt } from "@ai-sdk/provider";
import type { ChatHistoryItem } from "node-llama-cpp";

/**
 * An AI SDK prompt as node-llama-cpp's chat history, ending with the empty model turn to generate.
 * Only text is carried: dissent sends no files and no tools (a part of another kind is an error
 * sentence rather than silently dropped).
 */
export function toChatHistory(prompt: LanguageModelV3Prompt): ChatHistoryItem[] | { error: string } {
  const history: ChatHistoryItem[] = [];
  for (const message of prompt) {
    switch (message.role) {
      case "system": {
        const last = history[history.length - 1];
        // Several system messages in a row read as one (chat templates expect a single one first).
        if (last?.type === "system" && typeof last.text === "string") last.text = `${last.text}\n\n${message.content}`;
        else history.push({ type: "system", text: message.content });
        break;
      }
      case "user": {
        const texts: string[] = [];
        for (const part of message.content) {
          if (part.type !== "text") return { error: `the llama-cpp engine reads text only, not ${part.type} parts` };
          texts.push(part.text);
        }
        history.push({ type: "user", text: texts.join("\n\n") });
        break;
      }
      case "assistant": {
        const texts: string[] = [];
        for (const part of message.content) {
          if (part.type === "text") texts.push(part.text);
          else if (part.type !== "reasoning") return { error: `the llama-cpp engine reads text only, not ${part.type} parts` };
        }
        history.push({ type: "model", response: [texts.join("")] });
        break;
      }
      case "tool":
        return { error: "the llama-cpp engine does not call tools" };
    }
  }
  history.push({ type: "model", response: [] });
  return history;
}
