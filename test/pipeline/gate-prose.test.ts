/**
 * The ComplexityGate's keywords count only in prose (issue 30, "Faults a real model met"): vite #3068
 * went load-bearing on "refactor" in the branch name of a reproduction link, ky #149 on a variable
 * named `api`. A URL, a code span or block, an identifier is not what an issue is about; the reason
 * names the word, where it was and the sentence around it.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { gateByHeuristics, KEYWORD_SCAN_CHARS } from "../../src/pipeline/complexity-gate.js";
import { dissent, scratch } from "../support/cli.js";
import { frontier, startRealisticDouble } from "../support/double/index.js";
import { rolesConfig } from "../support/roles-config.js";

vi.setConfig({ testTimeout: 120_000 });

const VITE_3068 = {
  title: "Fix typo in README: 'dependancies'",
  body: [
    "The README's install section says `dependancies` instead of dependencies.",
    "",
    "Reproduction: https://github.com/someone/vite-repro/tree/refactor-config-loading (see [the branch](https://github.com/someone/vite-repro/compare/main...refactor-deps)).",
  ].join("\n"),
};

const KY_149 = {
  title: "Hooks are not called with the options object",
  body: [
    "With `api.get()` the `beforeRequest` hook receives `undefined`:",
    "",
    "```js",
    "const api = ky.create({ hooks: { beforeRequest: [(options) => console.log(options)] } });",
    "await api.get('https://example.com/refactor');",
    "```",
    "",
    "    api.post(url) // indented code too",
    "",
    "The apiClient wrapper and API_TOKEN_ENV, ky.extend and src/api/index.ts show the same.",
  ].join("\n"),
};

describe("keywords count only in prose", () => {
  it("a keyword inside a URL, a link's address, inline code, a code block or an identifier routes nothing", () => {
    expect(gateByHeuristics(VITE_3068)).toBeUndefined();
    expect(gateByHeuristics(KY_149)).toBeUndefined();
    expect(gateByHeuristics({ title: "Use `refactorConfig()` in the docs", body: "<!-- Describe the security impact -->\nA wording fix." })).toBeUndefined();
  });

  it("the same word in a sentence routes load-bearing, and the reason names the word, where it was and the sentence", () => {
    expect(gateByHeuristics({ ...KY_149, body: `${KY_149.body}\n\nThis changes the public API of every instance. More below.` })).toEqual({
      route: "load_bearing",
      reason: `keyword 'api' in the body: "This changes the public API of every instance."`,
      source: "heuristic",
    });
    expect(gateByHeuristics({ title: "Refactor the `loader` before 3.0", body: "" })?.reason).toBe(
      `keyword 'refactor' in the title: "Refactor the loader before 3.0"`,
    );
    // A link's text is prose; only its address is not.
    expect(gateByHeuristics({ title: "Docs", body: "See [the security policy](https://example.com/a) first." })?.reason).toBe(
      `keyword 'security' in the body: "See the security policy first."`,
    );
  });

  it("a long sentence is cut around the word, with an ellipsis where it was cut", () => {
    const long = `${"Some words go before it, ".repeat(6)}and a race condition appears${", then many words follow it".repeat(6)}.`;
    const reason = gateByHeuristics({ title: "Flaky test", body: long })?.reason ?? "";
    expect(reason).toMatch(/^keyword 'race condition' in the body: "….{20,}race condition.{20,}…"$/);
    expect(reason.length).toBeLessThan(140);
  });
});

describe("the keyword rule's bounds (docs/limits.md)", () => {
  it("a body nested too deep for the markdown parser is still read: code and URLs blanked, prose counted", () => {
    const deep = `${"> ".repeat(3000)}x\n\nSee \`api\` and https://example.com/refactor.\n\nThis leaks a password.`;
    expect(gateByHeuristics({ title: "Quotes", body: deep })?.reason).toBe(`keyword 'password' in the body: "This leaks a password."`);
    expect(gateByHeuristics({ title: "Quotes", body: deep.replace(" password", " nothing") })).toBeUndefined();
  });

  it(`the body is read up to ${KEYWORD_SCAN_CHARS} characters; a keyword past them is left to the model's answer`, () => {
    const filler = "Words about the README wording. ".repeat(Math.ceil(KEYWORD_SCAN_CHARS / 32));
    expect(gateByHeuristics({ title: "Docs", body: `${filler}\n\nThis is a security fix.` })).toBeUndefined();
    expect(gateByHeuristics({ title: "Docs", body: `This is a security fix.\n\n${filler}` })?.reason).toBe(
      `keyword 'security' in the body: "This is a security fix."`,
    );
  });
});

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const c of open.splice(0)) await c.close();
});

describe("a README typo that links a refactor branch (through the realistic double and the CLI)", () => {
  it("costs 3 calls — the gate's, the planner's and the reviewer's — not a load-bearing cycle", async () => {
    const double = await startRealisticDouble({ seed: 7, quirks: frontier });
    const s = scratch("dissent-gate-");
    open.push({ close: async () => (await double.close(), s.cleanup()) });
    s.write("dissent.config.yaml", rolesConfig(double.url, "call_timeout_ms: 20000"));
    const run = (args: string[]) => dissent(args, { cwd: s.dir, env: { DISSENT_HOME: `${s.dir}/home` }, timeoutMs: 100_000 });
    const created = await run(["issue", "new", "--title", VITE_3068.title, "--body", VITE_3068.body]);
    const r = await run(["issue", "plan", created.stdout.trim(), "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { route: string; route_reason: string; calls: number; stages: unknown[] };
    expect(out).toMatchObject({ route: "trivial", route_reason: "model answered TRIVIAL", calls: 3, stages: [] });
  });
});
