/**
 * The diff review reads around the diff (issue 30 item 5, docs/implement.md "What the review reads"):
 * besides the diff, the review critics get the definitions the diff changes, whole, and their callers
 * elsewhere in the repository (from the same map), in one code block shared by the council — and no
 * context file pasted whole. Through the built CLI, the scripted agent and the realistic double.
 */
import { readDataBlocks } from "../../src/prompting/data-block.js";
import { afterEach, describe, expect, it, vi } from "vitest";
import { implementWorld, type ImplementWorld } from "../support/implement-world.js";
import type { ChatRequest } from "../support/openai-server.js";

vi.setConfig({ testTimeout: 240_000 });

const worlds: ImplementWorld[] = [];
afterEach(async () => {
  for (const w of worlds.splice(0)) await w.close();
});

const userText = (r: ChatRequest) => r.body.messages.map((m) => (typeof m.content === "string" ? m.content : "")).join("\n\n");
const codeOf = (r: ChatRequest) => readDataBlocks(userText(r)).find((b) => b.kind === "code")?.text;

describe("the implement review reads the code around the diff", () => {
  it("the critics' code block holds the changed definition as it was and its caller; the stage records what it read", async () => {
    const w = await implementWorld({ mode: "good" });
    worlds.push(w);
    const id = await w.readyIssue();
    const r = await w.run(["issue", "implement", id, "--json"]);
    expect(r.code, r.stderr).toBe(0);

    const critics = ["review.correctness", "review.security", "review.tests"].map((role) => w.double.byRole(role)[0] as ChatRequest);
    const code = codeOf(critics[0] as ChatRequest) ?? "";
    // The definition the diff changes, whole, as it is in the user's checkout (the diff's base side)…
    expect(code).toMatch(/### src\/sum\.js:1-3\nexport function sum\(a, b\) \{\n {2}throw new Error\("not implemented"\);\n\}/);
    // …and the code that calls it.
    expect(code).toContain("### test.js:");
    expect(code).toContain("assert.equal(sum(2, 3), 5);");
    // One block for the whole council (and the acceptance critic): the prefix they share.
    for (const q of critics) expect(codeOf(q)).toBe(code);
    expect(codeOf(w.double.byRole("review.acceptance")[0] as ChatRequest)).toBe(code);

    const events = (await w.run(["events", "--issue", id, "--json"])).stdout
      .trim()
      .split("\n")
      .map(
        (l) => JSON.parse(l) as { type: string; stage?: string; stage_run?: { code_context?: { roles: string[]; items: { path: string; why: string }[] }[] } },
      );
    const review = events.find((e) => e.type === "AdversarialStageCompleted" && e.stage === "implementation_review");
    const read = review?.stage_run?.code_context ?? [];
    expect(read[0]?.roles).toEqual(expect.arrayContaining(["review.correctness", "review.security", "review.tests", "review.acceptance"]));
    expect(read[0]?.items.map((i) => i.path)).toEqual(expect.arrayContaining(["src/sum.js", "test.js"]));
  });
});
