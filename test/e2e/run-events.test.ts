import { afterEach, describe, expect, it } from "vitest";
import { startOpenAIServer, type FakeOpenAI } from "../support/openai-server.js";
import { audit, byRole, parseJsonOut, world, type World } from "../support/e2e.js";

const PROMPT = "Describe the moon in one line.";
const DRAFT = "The moon is made of cheese.";
const REVISED = "The moon is Earth's rocky satellite.";
const cheese = { category: "factual_risk", severity: "high", evidence: "made of cheese", concern: "It is rock." };

interface ModelCallEvent {
  type: string;
  issue_id: string | null;
  run_id?: string;
  role: string;
  route: string;
  cached: boolean;
  error?: string;
  fallback_reason?: string;
}

let w: World | undefined;
let backup: FakeOpenAI | undefined;
afterEach(async () => {
  await w?.close();
  await backup?.close();
  w = undefined;
  backup = undefined;
});

async function modelCalls(world: World): Promise<ModelCallEvent[]> {
  const r = await world.run(["events", "--json"]);
  expect(r.code).toBe(0);
  return r.stdout
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as ModelCallEvent)
    .filter((e) => e.type === "ModelCall");
}

describe("dissent run records a ModelCall event per call", () => {
  it("one event per call of the run, tied to its run_id, with no prompt or reply text", async () => {
    w = await world(byRole({ executor: { content: DRAFT }, challenger: { content: audit("needs_work", [cheese]) }, revision: { content: REVISED } }));
    const out = parseJsonOut(await w.run(["run", "--audit", "--json", PROMPT]));
    const events = await modelCalls(w);
    expect(events.map((e) => [e.role, e.run_id, e.issue_id, e.cached])).toEqual([
      ["executor", out.run.run_id, null, false],
      ["challenger", out.run.run_id, null, false],
      ["revision", out.run.run_id, null, false],
    ]);
    const text = JSON.stringify(events);
    expect(text).not.toContain(PROMPT);
    expect(text).not.toContain(REVISED);
  });

  it("a fallback is recorded: the failed primary with its error, the secondary with the reason", async () => {
    backup = await startOpenAIServer(byRole({ executor: { content: DRAFT } }));
    const secondaryUrl = backup.url;
    w = await world(byRole({ executor: { status: 503 } }), { secondaryUrl });
    const out = parseJsonOut(await w.run(["run", "--json", PROMPT]));
    expect(out.run.calls[0]?.route).toBe("secondary");
    const events = await modelCalls(w);
    expect(events).toHaveLength(2);
    expect(events[0]).toMatchObject({ role: "executor", route: "primary", error: expect.stringMatching(/\S/) });
    expect(events[1]).toMatchObject({ role: "executor", route: "secondary", fallback_reason: expect.stringMatching(/\S/) });
  });
});
