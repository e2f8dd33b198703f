/**
 * Issue 32: every line dissent's CLI writes on stderr starts with `dissent:` — node-llama-cpp's own
 * console output included (it printed `[node-llama-cpp] Error creating Jinja template chat wrapper…`
 * and a stack for a model whose chat template it cannot render), and whatever else a library prints
 * goes to stderr as one such line, never to stdout (which `--json` and `dissent mcp` own).
 */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dissent, scratch } from "../support/cli.js";
import { parseJsonOut } from "../support/e2e.js";
import { TINY_CHAT, writeTinyGguf } from "../support/tiny-gguf.js";

let s: ReturnType<typeof scratch>;
beforeAll(() => {
  s = scratch("dissent-console-");
  // A chat template with a syntax error: node-llama-cpp's Jinja renderer refuses it.
  writeTinyGguf(join(s.dir, "broken-template.gguf"), { ...TINY_CHAT, chatTemplate: "{% for m in messages %}{{ m.content }{% endfor %}" });
  s.write(
    "tiny.yaml",
    [
      "providers:",
      '  tiny: { type: llama-cpp, model: "./broken-template.gguf", threads: 1, gpu: false, context_size: 8192 }',
      "routes:",
      '  executor: { primary: "tiny:drafter" }',
      '  challenger: { primary: "tiny:judge" }',
      "seed: 7",
    ].join("\n"),
  );
});
afterAll(() => s.cleanup());

const stderrLines = (stderr: string) => stderr.split("\n").filter((l) => l !== "");

describe("stderr holds dissent's lines only", () => {
  it("a model whose chat template cannot be rendered: one warning naming the provider and the file, the run goes on", async () => {
    const r = await dissent(["run", "--json", "--config", "tiny.yaml", "What is 2+2?"], {
      cwd: s.dir,
      env: { DISSENT_HOME: join(s.dir, "home") },
      timeoutMs: 60_000,
    });
    expect(r.code, r.stderr).toBe(0);
    expect(typeof parseJsonOut(r).final_output).toBe("string");
    const lines = stderrLines(r.stderr);
    for (const l of lines) expect(l).toMatch(/^dissent: /);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      new RegExp(
        `^dissent: warning: providers\\.tiny: the chat template in ${join(s.dir, "broken-template.gguf").replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")} cannot be used \\(.+\\): a built-in chat format is used instead`,
      ),
    );
  }, 60_000);

  it("whatever a library prints through the console reaches stderr as one dissent line, never stdout", async () => {
    // A library loaded into the CLI that, on each HTTP request, logs, warns with colour, and errors with a stack.
    const library = [
      "const send = globalThis.fetch;",
      "globalThis.fetch = (...args) => {",
      "  console.log('library says hello');",
      "  console.warn('\\x1b[31mlibrary warns\\x1b[0m');",
      "  console.error('library failed:', new Error('boom'));",
      "  return send(...args);",
      "};",
    ].join("\n");
    s.write(
      "remote.yaml",
      ["providers:", '  far: { type: openai-compatible, base_url: "http://127.0.0.1:9/v1" }', "routes:", '  default: { primary: "far:m" }'].join("\n"),
    );
    const r = await dissent(["doctor", "--json", "--config", "remote.yaml"], {
      cwd: s.dir,
      env: { DISSENT_HOME: join(s.dir, "home"), NODE_OPTIONS: `--import=data:text/javascript,${encodeURIComponent(library)}` },
    });
    expect(r.code, r.stderr).toBe(1); // the server is not there: the route fails, the output is still JSON
    expect(r.stdout).not.toContain("library");
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: false });
    expect(stderrLines(r.stderr)).toEqual(["dissent: library says hello", "dissent: warning: library warns", "dissent: warning: library failed: Error: boom"]);
  });
});
