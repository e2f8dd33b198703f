import type { LanguageModelV3StreamPart, LanguageModelV3Usage, SharedV3ProviderMetadata } from "@ai-sdk/provider";
import { type NotAnAnswer, notAnAnswer } from "../models/answer-rule.js";

type Part = LanguageModelV3StreamPart;

/** What a part is counted as besides its data: a stream of empty parts is bounded too. */
const PART_BYTES = 16;

/** A part's size as the draft's cap counts it: the UTF-8 bytes of its delta (text, reasoning, tool input) or file data, and a little for the part. */
export function partBytes(p: Part): number {
  if ("delta" in p && typeof p.delta === "string") return Buffer.byteLength(p.delta) + PART_BYTES;
  if (p.type === "file") return (typeof p.data === "string" ? p.data.length : p.data.byteLength) + PART_BYTES;
  return PART_BYTES;
}

/** A stream read up to its cap: every part, or — `rest` set — the parts up to the cap and the reader still holding the rest. */
export interface ReadParts {
  parts: Part[];
  /** Set when the stream passed the cap: the reader of what is left, not released. */
  rest?: ReadableStreamDefaultReader<Part>;
}

/**
 * Reads a stream to its end, or until its parts pass `limit` bytes (partBytes): then it stops reading
 * and hands back the reader with the rest, so a runaway stream costs at most `limit` of memory.
 * `hold` receives the reader so a cancelled consumer can cancel it.
 */
export async function readAll(stream: ReadableStream<Part>, limit: number, hold?: (reader: ReadableStreamDefaultReader<Part>) => void): Promise<ReadParts> {
  const reader = stream.getReader();
  hold?.(reader);
  const parts: Part[] = [];
  let seen = 0;
  let over = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { parts };
      parts.push(value);
      seen += partBytes(value);
      if (seen > limit) {
        over = true;
        return { parts, rest: reader };
      }
    }
  } finally {
    if (!over) reader.releaseLock();
  }
}

const TOOL_PARTS = new Set<Part["type"]>(["tool-call", "tool-result", "tool-input-start", "tool-input-delta", "tool-input-end", "tool-approval-request"]);

/**
 * Why a buffered reply is passed through unaudited, if it is: it calls tools, it reports an error,
 * or it is not an answer by the call door's rule (cut off at its length limit, reasoning only).
 */
export function unauditableParts(parts: readonly Part[]): "tool_calls" | "error" | NotAnAnswer | undefined {
  if (parts.some((p) => TOOL_PARTS.has(p.type))) return "tool_calls";
  if (parts.some((p) => p.type === "error")) return "error";
  const finish = parts.find((p) => p.type === "finish");
  const ended = finish?.type === "finish" ? finish.finishReason : undefined;
  return notAnAnswer({ text: textOfParts(parts), finishReason: ended?.unified, rawFinishReason: ended?.raw });
}

/** The reply's text: every text delta, in order. */
export function textOfParts(parts: readonly Part[]): string {
  let text = "";
  for (const p of parts) if (p.type === "text-delta") text += p.delta;
  return text;
}

/** The usage a stream reported in its finish part. */
export function usageOfParts(parts: readonly Part[]): LanguageModelV3Usage | undefined {
  for (const p of parts) if (p.type === "finish") return p.usage;
  return undefined;
}

/** The first error part's error, if the stream reported one. */
export function errorOfParts(parts: readonly Part[]): { error: unknown } | undefined {
  for (const p of parts) if (p.type === "error") return { error: p.error };
  return undefined;
}

/**
 * A stream's parts with its text replaced by `text`, when they differ (a revision whose preamble
 * was stripped): the text blocks become one, where the first one was; every other part keeps its
 * type and place.
 */
export function withText(parts: readonly Part[], text: string): Part[] {
  if (textOfParts(parts) === text) return [...parts];
  const out: Part[] = [];
  let id: string | undefined;
  for (const p of parts) {
    if (p.type === "text-start" || p.type === "text-delta" || p.type === "text-end") {
      if (id === undefined) {
        id = p.id;
        out.push({ type: "text-start", id }, { type: "text-delta", id, delta: text }, { type: "text-end", id });
      }
      continue;
    }
    out.push(p);
  }
  return out;
}

/**
 * The parts to emit: `body` (the draft's or the revision's own parts, in their order) with the
 * stream-start carrying the warnings of every call, and the finish part carrying the summed usage
 * and dissent's metadata.
 */
export function finalParts(body: readonly Part[], warningsFrom: readonly Part[], usage: LanguageModelV3Usage, metadata: SharedV3ProviderMetadata): Part[] {
  const warnings = warningsFrom.flatMap((p) => (p.type === "stream-start" ? p.warnings : []));
  return body.map((p): Part => {
    if (p.type === "stream-start") return { ...p, warnings };
    if (p.type === "finish") return { ...p, usage, providerMetadata: { ...p.providerMetadata, ...metadata } };
    return p;
  });
}
