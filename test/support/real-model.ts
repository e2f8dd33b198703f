import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { readDataBlocks, type DataBlock } from "../../src/prompting/data-block.js";

/** The recorded run of next-auth #4625 (test/fixtures/real-model/README.md). */
export const NEXT_AUTH = fileURLToPath(new URL("../fixtures/real-model/pipeline-next-auth-4625/", import.meta.url));

/** One recorded call: its number, the role it was for, its messages, and the model's reply. */
export interface RecordedCall {
  n: string;
  role: string;
  system: string;
  /** The user and assistant messages, in order. */
  messages: { role: string; text: string }[];
  /** Data blocks of every user message, in order. */
  blocks: DataBlock[];
  reply: string;
}

/** Splits a recorded request (`===== system =====`, `===== user =====`, …) into its messages. */
function messagesOf(text: string): { role: string; text: string }[] {
  const parts = text.split(/^===== (system|user|assistant) =====$/m);
  const out: { role: string; text: string }[] = [];
  for (let i = 1; i < parts.length; i += 2) out.push({ role: parts[i] as string, text: (parts[i + 1] ?? "").replace(/^\n/, "").replace(/\n$/, "") });
  return out;
}

/** Every recorded call of a run folder, in the order they were made. */
export function recordedRun(dir: string = NEXT_AUTH): RecordedCall[] {
  return readdirSync(dir)
    .filter((f) => /^\d{4}\.txt$/.test(f))
    .sort()
    .map((f) => {
      const n = f.slice(0, 4);
      const all = messagesOf(readFileSync(`${dir}${f}`, "utf8"));
      const system = all.find((m) => m.role === "system")?.text ?? "";
      const messages = all.filter((m) => m.role !== "system");
      return {
        n,
        role: /^Role: (\S+)/.exec(system)?.[1] ?? "",
        system,
        messages,
        blocks: messages.filter((m) => m.role === "user").flatMap((m) => readDataBlocks(m.text)),
        reply: readFileSync(`${dir}${n}.reply.txt`, "utf8"),
      };
    });
}

/** The recorded replies of each role, in the order that role was asked: what a replay answers its nth request with. */
export function repliesByRole(calls: readonly RecordedCall[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const c of calls) out.set(c.role, [...(out.get(c.role) ?? []), c.reply]);
  return out;
}
