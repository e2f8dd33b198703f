/**
 * Project context (issue 18, item 7): every pipeline role is told which project the issue belongs to
 * — config `project: { name, description }`, the GitHub repository's name and description by
 * default — as a data block right after the system rules. `context_files` are ranked with the code
 * (issue 30): each request carries the parts that bear on it, in its code block.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { readDataBlocks } from "../../src/prompting/data-block.js";
import { dissent, scratch } from "../support/cli.js";
import { startGithubDouble, type GithubDouble } from "../support/github-double.js";
import { startOpenAIServer, type ChatRequest, type FakeOpenAI } from "../support/openai-server.js";
import { pipelineWorld, type PipelineWorld } from "../support/pipeline-e2e.js";
import { agreeableReply, rolesConfig } from "../support/roles-config.js";

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const c of open.splice(0)) await c.close();
});

const firstMessage = (r: ChatRequest) =>
  typeof r.body.messages.find((m) => m.role === "user")?.content === "string" ? String(r.body.messages.find((m) => m.role === "user")?.content) : "";
const kinds = (r: ChatRequest) => readDataBlocks(firstMessage(r)).map((b) => b.kind);

describe("project context from the config", () => {
  let w: PipelineWorld;
  const extra = [
    "project:",
    "  name: cookie-session",
    '  description: "Simple cookie-based session middleware for Express."',
    "  context_files: [docs/context.md]",
  ].join("\n");

  it("every request of issue plan starts with the project block (name, description), then the issue; the context file reaches the councils in the code block, never whole in the project block", async () => {
    w = await pipelineWorld(() => undefined, { extra });
    open.push(w);
    mkdirSync(join(w.dir, "docs"));
    writeFileSync(join(w.dir, "docs", "context.md"), "Sessions are signed, not encrypted: the cookie holds the session itself.\n");
    const id = await w.newIssue("Encrypt cookies", "Session cookies should not be readable by the client.", ["dissent-load-bearing"]);
    await w.plan(id);
    expect(w.server.requests.length).toBeGreaterThan(10);
    let withCode = 0;
    for (const r of w.server.requests) {
      expect(kinds(r).slice(0, 2), r.body.model).toEqual(["project", "issue"]);
      const blocks = readDataBlocks(firstMessage(r));
      expect(blocks[0]?.text).toBe("Project: cookie-session\nDescription: Simple cookie-based session middleware for Express.");
      const code = blocks.find((b) => b.kind === "code")?.text;
      expect(blocks[0]?.text).not.toContain("Sessions are signed");
      if (code !== undefined) {
        withCode++;
        expect(code).toContain("### docs/context.md:1-");
        expect(code).toContain("Sessions are signed, not encrypted");
      }
    }
    // Every council role (the label skips the gate) is told the part of the context file that bears on the issue.
    expect(withCode).toBe(w.server.requests.length);
  });

  it("a context file that does not exist is a configuration error naming it (exit 2), before any request", async () => {
    w = await pipelineWorld(() => undefined, { extra });
    open.push(w);
    const r = await w.run(["issue", "new", "--title", "x"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^dissent: error: dissent\.config\.yaml: project\.context_files: docs\/context\.md not found/);
    expect(w.server.requests).toEqual([]);
  });

  it("a context file over 64 KiB is a configuration error naming it and the limit", async () => {
    w = await pipelineWorld(() => undefined, { extra });
    open.push(w);
    mkdirSync(join(w.dir, "docs"));
    writeFileSync(join(w.dir, "docs", "context.md"), "x".repeat(64 * 1024 + 1));
    const r = await w.run(["issue", "list"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^dissent: error: .*project\.context_files: .*docs\/context\.md: is larger than 64 KiB, the limit/);
  });

  it("without a project, requests carry no project block (and stay as they were)", async () => {
    w = await pipelineWorld(() => undefined);
    open.push(w);
    await w.plan(await w.newIssue("Encrypt cookies", "", ["dissent-load-bearing"]));
    for (const r of w.server.requests) expect(kinds(r)[0]).toBe("issue");
  });
});

describe("project context from the GitHub tracker", () => {
  const TOKEN = "ghp_testTOKEN1234567890";
  async function github(extra = "") {
    const gh: GithubDouble = await startGithubDouble({
      token: TOKEN,
      owner: "expressjs",
      repo: "cookie-session",
      description: "Simple cookie-based session middleware",
    });
    gh.addIssue({ number: 169, title: "Encrypt cookies", body: "Allow encrypting the session cookie." });
    const models: FakeOpenAI = await startOpenAIServer((req) => ({ content: agreeableReply(req.body.model) }));
    const dir = scratch();
    dir.write(
      "dissent.config.yaml",
      rolesConfig(models.url, [`tracker: { type: github, repo: "expressjs/cookie-session", base_url: "${gh.url}" }`, extra].join("\n")),
    );
    open.push({ close: async () => (await models.close(), await gh.close(), dir.cleanup()) });
    const r = await dissent(["issue", "plan", "169", "--json"], {
      cwd: dir.dir,
      env: { DISSENT_HOME: join(dir.dir, "home"), GITHUB_TOKEN: TOKEN, DISSENT_GITHUB_WRITE_INTERVAL_MS: "0" },
      timeoutMs: 60_000,
    });
    expect(r.code, r.stderr).toBe(0);
    return models.requests.map((q) => readDataBlocks(firstMessage(q))[0]);
  }

  it("by default, the repository's name and description", async () => {
    const first = await github();
    for (const b of first) {
      expect(b?.kind).toBe("project");
      expect(b?.text).toBe("Project: expressjs/cookie-session\nDescription: Simple cookie-based session middleware");
    }
  });

  it("the config's name wins; the description still comes from the repository", async () => {
    const first = await github("project: { name: cookie-session }");
    expect(first[0]?.text).toBe("Project: cookie-session\nDescription: Simple cookie-based session middleware");
  });
});
