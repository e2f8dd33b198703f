import { tmpdir } from "node:os";
import { afterEach, describe, expect, test } from "vitest";
import { bench10, small8b, startRealisticDouble, type RealisticDouble } from "../support/double/index.js";
import { challengerBody, chat, complexityBody, criticBody, executorBody, producerBody, reviewerBody, type Body } from "../support/double/client.js";

const open: RealisticDouble[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((d) => d.close()));
});

async function double(seed: number, quirks = small8b): Promise<RealisticDouble> {
  const d = await startRealisticDouble({ seed, quirks: { ...quirks, serial: false }, scenario: bench10 });
  open.push(d);
  return d;
}

/** A request of every kind, about issues with defects in every stage. */
function sequence(): Body[] {
  const bodies: Body[] = [];
  for (const issue of bench10.list) {
    bodies.push(complexityBody(issue), producerBody("discover.brief", issue), producerBody("planner", issue));
    for (const role of ["plan.risk_skeptic", "plan.builder", "plan.tester", "assumption_surfacer"]) {
      bodies.push(criticBody(role, issue, { name: "plan", text: `# Plan\n\n## Steps\n- ${issue.defects.map((d) => d.line).join("\n- ")}` }));
    }
    bodies.push(reviewerBody(issue, "# Plan\n\n## Steps\n- Do it.", ["It works."], []));
  }
  bodies.push(executorBody("How do I rotate my API keys?"), challengerBody("How do I rotate my API keys?", "Rotate them in the console. It takes one minute."));
  return bodies;
}

describe("determinism", () => {
  test("the same seed and the same requests give the same bytes, quirks and faults included", async () => {
    const a = await double(11);
    const b = await double(11);
    const bodies = sequence();
    for (const body of bodies) {
      const [x, y] = [await chat(a.url, body), await chat(b.url, body)];
      expect(y.raw).toBe(x.raw);
    }
  });

  test("an identical request to the same double gets the same reply", async () => {
    const d = await double(5, { ...small8b, truncate: 0, emptyReply: 0 });
    for (const body of sequence().slice(0, 12)) {
      const first = await chat(d.url, body);
      const again = await chat(d.url, body);
      expect(again.content).toBe(first.content);
    }
  });

  test("a pipeline request reworded around the same data blocks (persona, rubric, task line) draws the same dice; other material draws others", async () => {
    // As dissent lays a pipeline request out: the data blocks, then "Role: <role>" and the persona, the task line last.
    const asPipeline = (body: Body, persona: string, task: string): Body => {
      const [system, user, ...rest] = body.messages;
      const content = `${String(user?.content ?? "")}\n\nRole: ${body.model}\n\n${persona}\n\n${task}`;
      return { ...body, messages: [system as Body["messages"][number], { role: "user", content }, ...rest] };
    };
    const a = await double(11);
    const b = await double(11);
    const c = await double(11);
    const critics = sequence().filter((body) => body.model.startsWith("plan.") || body.model === "assumption_surfacer");
    let differ = 0;
    for (const body of critics) {
      const first = await chat(a.url, asPipeline(body, "You review plans in your lane.", "Task: reply with findings."));
      const reworded = await chat(
        b.url,
        asPipeline(body, "You review plans in your lane; the `code` block is evidence too.", "Task: reply with findings, quoting it or the code."),
      );
      expect(reworded.content).toBe(first.content);
      const other = JSON.parse(JSON.stringify(body)) as Body;
      const user = other.messages[1] as { content: string };
      user.content = user.content.replace("## Steps\n", "## Steps\n- Announce the change in the changelog.\n");
      if ((await chat(c.url, asPipeline(other, "You review plans in your lane.", "Task: reply with findings."))).content !== first.content) differ++;
    }
    expect(differ).toBeGreaterThan(critics.length / 2);
  });

  test("a diff artifact that differs only in how long the agent took and the scratch folder its stack trace names draws the same dice", async () => {
    const asPipeline = (body: Body): Body => {
      const [system, user, ...rest] = body.messages;
      return {
        ...body,
        messages: [system as Body["messages"][number], { role: "user", content: `${String(user?.content ?? "")}\n\nRole: ${body.model}` }, ...rest],
      };
    };
    const diffOf = (secs: string, dir: string) =>
      `Agent: attempt 1 exited 0 after ${secs} s.\n\n\`\`\`diff\n+  return a - b;\n\`\`\`\n\nTests: failed (exit 1).\n\n    at file://${tmpdir()}/${dir}/home/worktrees/issue-1/test.js:4:8`;
    const a = await double(11);
    const b = await double(11);
    for (const issue of bench10.list.slice(0, 4)) {
      const first = await chat(a.url, asPipeline(criticBody("review.correctness", issue, { name: "diff", text: diffOf("0.4", "dissent-implement-aB3dE") })));
      const busy = await chat(b.url, asPipeline(criticBody("review.correctness", issue, { name: "diff", text: diffOf("3.9", "dissent-implement-Zq81x") })));
      // The same choices; a quote of the agent's line quotes its own time.
      const same = (t: string) => t.replace(/after \d+(?:\.\d+)? s/g, "after … s").replace(/dissent-implement-\w+/g, "…");
      expect(same(busy.content)).toBe(same(first.content));
    }
  });

  test("another seed changes the quirks drawn", async () => {
    const a = await double(1);
    const b = await double(2);
    let differ = 0;
    for (const body of sequence()) if ((await chat(a.url, body)).raw !== (await chat(b.url, body)).raw) differ++;
    expect(differ).toBeGreaterThan(10);
  });
});
