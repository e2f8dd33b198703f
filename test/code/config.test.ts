/**
 * `project.repo` and `context:` (issue 30, docs/configuration.md): the repository the councils read
 * and the code budget, resolved from the config — the checkout named, else implement.repo, else the
 * GitHub tracker's repository, else none — and per-role budgets, most specific first.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { codeContextFor } from "../../src/code/index.js";
import { loadConfig } from "../../src/config/load.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
/** A config file (and the folders it names) in a folder of its own. */
function configWith(yaml: string, folders: string[] = []) {
  const dir = mkdtempSync(join(tmpdir(), "dissent-codecfg-"));
  dirs.push(dir);
  for (const f of folders) mkdirSync(join(dir, f), { recursive: true });
  writeFileSync(
    join(dir, "dissent.config.yaml"),
    `providers:\n  local: { type: openai-compatible, base_url: "http://127.0.0.1:9/v1" }\nroutes:\n  default: { primary: "local:m" }\n${yaml}`,
  );
  return { dir, load: () => loadConfig({ env: {}, cwd: dir }) };
}

describe("project.repo and context:", () => {
  it("names no repository by default: nothing is mapped, and the budget is 6000 tokens", async () => {
    const { load } = configWith("");
    const config = load();
    expect(config.code.source).toBeNull();
    expect(config.code.budgetTokens).toBe(6000);
    expect(config.code.budgetFor("plan.builder")).toBe(6000);
    expect(await codeContextFor(config)).toBeNull();
  });

  it("resolves the checkout relative to the config file; implement.repo is the default; false means none", () => {
    const a = configWith("project:\n  repo: ./code\n", ["code"]);
    expect(a.load().code.source).toEqual({ kind: "local", root: join(a.dir, "code") });
    const b = configWith('implement:\n  repo: ./work\n  command: "true"\n', ["work"]);
    expect(b.load().code.source).toEqual({ kind: "local", root: join(b.dir, "work") });
    const c = configWith('project:\n  repo: false\nimplement:\n  repo: ./work\n  command: "true"\n', ["work"]);
    expect(c.load().code.source).toBeNull();
    const d = configWith("tracker:\n  type: github\n  repo: acme/widgets\n");
    expect(d.load().code.source).toEqual({ kind: "github", repo: "acme/widgets" });
  });

  it("gives each role its budget, most specific first, like routes", () => {
    const { load } = configWith(
      "context:\n  budget_tokens: 4000\n  roles:\n    plan: 8000\n    plan.builder: 12000\n    review: 0\n  map:\n    max_files: 100\n",
    );
    const code = load().code;
    expect(code.budgetFor("plan.builder")).toBe(12000);
    expect(code.budgetFor("plan.skeptic")).toBe(8000);
    expect(code.budgetFor("review.security")).toBe(0);
    expect(code.budgetFor("discover.brief")).toBe(4000);
    expect(code.limits).toEqual({ maxFiles: 100, maxFileBytes: 262144, maxTotalBytes: 67108864, parseMs: 2000 });
  });

  it("refuses a checkout that is not there, a role that does not exist and a bound out of range, naming the setting", () => {
    expect(() => configWith("project:\n  repo: ./nowhere\n").load()).toThrow(/dissent\.config\.yaml: project\.repo: \.\/nowhere not found/);
    expect(() => configWith("context:\n  roles:\n    plann: 100\n").load()).toThrow(
      /dissent\.config\.yaml:\d+: context\.roles\.plann names no role: did you mean 'plan'\?/,
    );
    expect(() => configWith("context:\n  map:\n    max_files: 0\n").load()).toThrow(/dissent\.config\.yaml:\d+: context\.map\.max_files/);
  });
});
