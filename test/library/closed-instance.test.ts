/**
 * Issue 20 item 12: a closed `createDissent` instance refuses with a typed error instead of quietly
 * reopening its store (the old one went on creating issues after `close()`).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createDissent, UsageError } from "../../src/index.js";

let home: string | undefined;
afterEach(() => {
  if (home) rmSync(home, { recursive: true, force: true });
  home = undefined;
});

const config = { providers: { p: { type: "openai-compatible", base_url: "http://127.0.0.1:9/v1" } }, routes: { default: { primary: "p:m" } } };

describe("a closed createDissent instance", () => {
  it("refuses issues.create, issues.list, events, run, planIssue and store() with a UsageError; redact still works", async () => {
    home = mkdtempSync(join(tmpdir(), "dissent-closed-"));
    const d = createDissent({ config, env: { DISSENT_HOME: home }, cwd: home });
    const before = await d.issues.create({ title: "Made while open" });
    expect(before.id).toBe("1");
    await d.close();

    const calls: [string, () => Promise<unknown>][] = [
      ["issues.create", () => d.issues.create({ title: "Made after close" })],
      ["issues.list", () => d.issues.list()],
      ["events", () => d.events()],
      ["run", () => d.run({ prompt: "hi" })],
      ["planIssue", () => d.planIssue("1")],
      ["store", () => d.store()],
    ];
    for (const [what, call] of calls) {
      const e = await call().then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(UsageError.isInstance(e), `${what}: ${String(e)}`).toBe(true);
      expect(String(e)).toMatch(/closed/);
    }
    expect(d.redact("nothing secret")).toBe("nothing secret");

    // Nothing was made after close: a new instance on the same home sees the one issue.
    const again = createDissent({ config, env: { DISSENT_HOME: home }, cwd: home });
    expect((await again.issues.list()).map((i) => i.title)).toEqual(["Made while open"]);
    await again.close();
  });
});
