import { readDataBlocks } from "../../src/prompting/data-block.js";
import type { ChatRequest } from "./openai-server.js";

const requestText = (req: ChatRequest): string => req.body.messages.map((m) => m.content).join("\n\n");

/** A CRITICAL or HIGH finding must quote the artifact under review (docs/issue.md): scripted ones without evidence quote its first sentence. */
export function quoteUnderReview(req: ChatRequest, content: string): string {
  let reply: unknown;
  try {
    reply = JSON.parse(content);
  } catch {
    return content;
  }
  if (!reply || typeof reply !== "object" || !Array.isArray((reply as { findings?: unknown }).findings)) return content;
  const text = readDataBlocks(requestText(req)).find((b) => b.kind === "under_review")?.text ?? "";
  const line = text.split("\n").find((l) => !l.startsWith("#") && l.split(/\s+/).filter((w) => /[a-z0-9]/i.test(w)).length >= 3) ?? text;
  const list = (reply as { findings: { severity?: string; evidence?: string }[] }).findings.map((f) =>
    f.evidence === undefined && (f.severity === "CRITICAL" || f.severity === "HIGH") ? { evidence: line, ...f } : f,
  );
  return JSON.stringify({ ...(reply as object), findings: list });
}
