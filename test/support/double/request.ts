import { tmpdir } from "node:os";
import { readDataBlocks, type DataBlock } from "../../../src/prompting/data-block.js";
import type { ChatRequest } from "../openai-server.js";
import { canonicalJson } from "../../../src/hash.js";
import { hashOf } from "./prng.js";
import { legacyBlocks } from "./legacy.js";
import { tryJson } from "./text.js";

export const EXEC_MODEL = "exec-model";
export const CHAL_MODEL = "chal-model";
export const PRODUCERS = ["discover.brief", "shape.writer", "planner"] as const;

/** A request as the double reads it. */
export interface Seen {
  model: string;
  /** Hash of model + messages: the key of every seeded choice about this request. */
  key: string;
  messages: { role: string; text: string }[];
  lastUser: string;
  /** The previous draft, on a retry or a revision. */
  assistant?: string;
  /** Data blocks of every user message, in order. */
  blocks: DataBlock[];
  /** Data blocks of the last user message. */
  lastBlocks: DataBlock[];
  issue?: { title: string; body: string };
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content))
    return content.map((p: unknown) => (p && typeof p === "object" && "text" in p && typeof p.text === "string" ? p.text : "")).join("");
  return "";
}

/**
 * The key of a request's seeded choices. A pipeline request's opening turn (system and first user
 * message) is read as the set of data blocks it carries — the material the role judges, whatever order
 * they come in and whatever the instructions around them say — so laying a request out for prompt
 * caching leaves every choice as it was, and so does rewording a persona, the rubric or a task line
 * (the double does not follow their wording: its roles are scripted): the same material, the same dice.
 * A request with no data blocks (a release before CONTRACT r2) is read as the set of paragraphs it says.
 * Other requests (the gate's, the client's) keep their bytes.
 */
function keyOf(model: string, messages: readonly { role: string; text: string }[]): string {
  const firstAssistant = messages.findIndex((m) => m.role === "assistant");
  const opening = firstAssistant === -1 ? messages : messages.slice(0, firstAssistant);
  const after = firstAssistant === -1 ? [] : messages.slice(firstAssistant);
  // What the project and the code blocks hold is context, not what is judged: the same request with or
  // without the repository's code (or a context file pasted whole) draws the same dice.
  const said = opening.flatMap((m) => judged(m.text).split("\n\n")).map((p) => p.trim());
  // dissent's pipeline requests name their role on a line of its own, before or after the shared blocks.
  const pipeline = model !== EXEC_MODEL && model !== CHAL_MODEL && said.some((p) => /^Role: \S+$/m.test(p.split("\n")[0] ?? ""));
  if (!pipeline) return hashOf(canonicalJson({ model, messages }));
  const data = opening
    .flatMap((m) => readDataBlocks(m.text))
    .filter((b) => b.kind !== "code" && b.kind !== "project")
    .map((b) => `${b.kind}:${b.name ?? ""}:${untimed(b.text)}`)
    .sort();
  if (data.length) return hashOf(canonicalJson({ model, data, after }));
  return hashOf(canonicalJson({ model, said: said.filter(Boolean).map(untimed).sort(), after }));
}

/** A test's scratch folder (`/tmp/dissent-implement-Ab12Cd`: a test output's stack trace names it), a new name every run. */
const SCRATCH = new RegExp(`(${tmpdir().replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}/)[\\w.-]+`, "g");

/**
 * A block's text without the times it reports and the scratch folder it names ("exited 0 after 1.3 s", "timed out after 20.0 s"):
 * how long an agent or a test took is the machine's load, not the material — the same attempt on a
 * busy machine draws the same dice.
 */
const untimed = (text: string) => text.replace(/\bafter \d+(?:\.\d+)? s\b/g, "after … s").replace(SCRATCH, "$1…");

/** A request's text without its project and code blocks (and the line that introduces the code). */
function judged(text: string): string {
  return text
    .replace(/<data kind="(?:code|project)"(?: name="[a-z_]+")? tag="([0-9a-f]{8,64})">\n[\s\S]*?\n<\/data tag="\1">/g, "")
    .replace(/^The repository's code chosen for this request[^\n]*$/gm, "");
}

export function readRequest(req: ChatRequest): Seen {
  const messages = req.body.messages.map((m) => ({ role: m.role, text: textOf(m.content) }));
  const users = messages.filter((m) => m.role === "user");
  const lastUser = users[users.length - 1]?.text ?? "";
  const assistants = messages.filter((m) => m.role === "assistant");
  let blocks = users.flatMap((m) => readDataBlocks(m.text));
  // A request of the release before CONTRACT r2 has no data blocks: read its markdown sections instead.
  const legacy = blocks.length === 0 && users.length > 0 && req.body.model !== CHAL_MODEL && req.body.model !== EXEC_MODEL;
  if (legacy) blocks = legacyBlocks(users[0]?.text ?? "", users.length > 1 ? lastUser : undefined);
  const issueBlock = blocks.find((b) => b.kind === "issue");
  let issue: Seen["issue"];
  if (issueBlock) {
    const [first = "", ...rest] = issueBlock.text.split("\n");
    issue = { title: first.replace(/^#\s*/, "").trim(), body: rest.join("\n").trim() };
  }
  const assistant = assistants[assistants.length - 1]?.text;
  return {
    model: req.body.model,
    key: keyOf(req.body.model, messages),
    messages,
    lastUser,
    ...(assistant !== undefined ? { assistant } : {}),
    blocks,
    lastBlocks: legacy ? (users.length > 1 ? blocks.filter((b) => b.kind === "blocking_concerns") : blocks) : readDataBlocks(lastUser),
    ...(issue ? { issue } : {}),
  };
}

/** The text of the first block of that kind (and name), searching the last user message first. */
export function block(seen: Seen, kind: string, name?: string): string | undefined {
  const match = (b: DataBlock) => b.kind === kind && (name === undefined || b.name === name);
  return (seen.lastBlocks.find(match) ?? seen.blocks.find(match))?.text;
}

/** A concern as producers and the reviewer are given them. */
export interface GivenConcern {
  id: string;
  severity: string;
  raised_by?: string;
  category?: string;
  concern: string;
  evidence?: string;
  human_required?: boolean;
}

/** The JSON array of a block as concerns (items that are not concerns are skipped). */
export function concernsIn(text: string | undefined): GivenConcern[] {
  const v = tryJson(text);
  const list = Array.isArray(v) ? v : v && typeof v === "object" && "concerns" in v && Array.isArray(v.concerns) ? (v.concerns as unknown[]) : [];
  return list.filter(
    (c): c is GivenConcern => !!c && typeof c === "object" && typeof (c as GivenConcern).concern === "string" && typeof (c as GivenConcern).id === "string",
  );
}

/** Pipeline role of a request, or the gate role by model: executor, revision or challenger. */
export function roleOf(req: ChatRequest): string {
  if (req.body.model === CHAL_MODEL) return "challenger";
  if (req.body.model === EXEC_MODEL) return req.body.messages.some((m) => m.role === "assistant") ? "revision" : "executor";
  return req.body.model;
}
