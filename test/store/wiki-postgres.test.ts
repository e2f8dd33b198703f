/**
 * The wiki on PostgreSQL (docs/factory.md): entries live in the database, not in files under the home;
 * `dissent wiki export DIR` writes them as the files of docs/issue.md and `dissent wiki import DIR`
 * reads hand edits back. The CLI, spawned, against a real server.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { factoryWorld, type FactoryWorld } from "../support/factory-world.js";

vi.setConfig({ testTimeout: 60_000 });

let w: FactoryWorld | undefined;
afterEach(async () => {
  await w?.close();
  w = undefined;
});

const entry = (fingerprint: string, title: string, extra = "") =>
  [
    "---",
    `fingerprint: ${fingerprint}`,
    "severity: HIGH",
    "category: edge_cases",
    "confidence: low",
    "stale: false",
    "pr: 40",
    'issue: "1"',
    "source: shipped-with-known-gap",
    "created: 2026-01-01T00:00:00.000Z",
    extra,
    "---",
    `# ${title}`,
    "",
    "Shipped with this gap.",
    "",
  ]
    .filter((l) => l !== "")
    .join("\n");

describe("dissent wiki on PostgreSQL", () => {
  it("import puts entries in the database; list and show read them; export writes them as files; a hand edit imported back replaces the entry", async () => {
    w = await factoryWorld(undefined, { postgres: true });
    const source = join(w.dir, "incoming");
    mkdirSync(source);
    writeFileSync(join(source, "retry-writers-aaaa1111.md"), entry("aaaa1111aaaa1111", "Concurrent writers are not covered"));
    writeFileSync(join(source, "oversized-bbbb2222.md"), entry("bbbb2222bbbb2222", "Oversized payloads are not rejected"));
    writeFileSync(join(source, "broken.md"), "no front matter here\n");

    const imported = await w.run(["wiki", "import", source, "--json"]);
    expect(imported.code, imported.stderr).toBe(0);
    expect(JSON.parse(imported.stdout)).toEqual({ imported: ["oversized-bbbb2222", "retry-writers-aaaa1111"] });
    expect(imported.stderr).toMatch(/warning: skipping wiki entry [^\n]*broken\.md: no front matter/);
    expect(existsSync(join(w.home, "wiki"))).toBe(false); // nothing on disk: the entries are in the database

    const listed = JSON.parse((await w.run(["wiki", "list", "--json"])).stdout) as { id: string; title: string; severity: string; prs: number[] }[];
    expect(listed.map((e) => [e.id, e.title, e.severity, e.prs])).toEqual([
      ["oversized-bbbb2222", "Oversized payloads are not rejected", "HIGH", [40]],
      ["retry-writers-aaaa1111", "Concurrent writers are not covered", "HIGH", [40]],
    ]);
    expect((await w.run(["wiki", "show", "retry-writers-aaaa1111"])).stdout).toBe(entry("aaaa1111aaaa1111", "Concurrent writers are not covered"));

    const out = join(w.dir, "exported");
    const exported = await w.run(["wiki", "export", out]);
    expect(exported.code, exported.stderr).toBe(0);
    expect(readdirSync(out).sort()).toEqual(["oversized-bbbb2222.md", "retry-writers-aaaa1111.md"]);
    expect(readFileSync(join(out, "oversized-bbbb2222.md"), "utf8")).toBe(entry("bbbb2222bbbb2222", "Oversized payloads are not rejected"));

    // A person marks one stale and rewords it, then imports the folder back.
    writeFileSync(
      join(out, "oversized-bbbb2222.md"),
      entry("bbbb2222bbbb2222", "Oversized payloads are rejected since PR 52", "updated: 2026-06-01T00:00:00.000Z").replace("stale: false", "stale: true"),
    );
    const back = await w.run(["wiki", "import", out]);
    expect(back.code, back.stderr).toBe(0);
    expect(back.stdout).toBe("imported 2 wiki entries\n");
    const relisted = JSON.parse((await w.run(["wiki", "list", "--json"])).stdout) as { id: string; title: string; stale: boolean }[];
    expect(relisted.find((e) => e.id === "oversized-bbbb2222")).toMatchObject({ title: "Oversized payloads are rejected since PR 52", stale: true });
    expect(relisted).toHaveLength(2);

    // wiki prune works on the database too.
    const pruned = await w.run(["wiki", "prune", "--older-than", "0", "--json"]);
    expect(pruned.code, pruned.stderr).toBe(0);
    expect(JSON.parse(pruned.stdout)).toEqual({ pruned: ["retry-writers-aaaa1111"] });
  });
});
