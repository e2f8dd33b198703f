/**
 * The reference reads as one (issue 19 item 6, issue 20): each page is one document — one title, no
 * merge leftovers, no notes about which issue wrote what —, the map lists every page, and
 * docs/limits.md names every numeric setting the config accepts, so no bound goes undocumented.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { marked, type Tokens } from "marked";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const DOCS = join(ROOT, "docs");
const read = (file: string) => readFileSync(file, "utf8");

/** The reference pages (the ADRs are records, not reference) and the README. */
const PAGES = [
  join(ROOT, "README.md"),
  ...readdirSync(DOCS)
    .filter((f) => f.endsWith(".md"))
    .map((f) => join(DOCS, f)),
];

describe("the reference reads as one", () => {
  it("no page keeps merge markers, contract citations or notes about which work wrote it", () => {
    const leftovers: string[] = [];
    for (const page of PAGES) {
      const text = read(page);
      for (const pattern of [/<!--\s*MERGE/, /\bCONTRACT\b/, /This (page|branch) holds/i, /written from CONTRACT/i]) {
        if (pattern.test(text)) leftovers.push(`${page.slice(ROOT.length)}: ${pattern}`);
      }
    }
    expect(leftovers).toEqual([]);
  });

  it("each page has exactly one title (a second `# ` heading is a page pasted below another)", () => {
    for (const page of PAGES) {
      const titles = marked.lexer(read(page)).filter((t) => t.type === "heading" && (t as Tokens.Heading).depth === 1);
      expect(titles.length, page.slice(ROOT.length)).toBe(1);
    }
  });

  it("the map, docs/README.md, links every page", () => {
    const map = read(join(DOCS, "README.md"));
    for (const page of readdirSync(DOCS).filter((f) => f.endsWith(".md") && f !== "README.md")) expect(map).toContain(`](${page})`);
  });

  it("docs/limits.md names every numeric setting of the config file", () => {
    const schema = read(join(ROOT, "src", "contracts", "config.ts"));
    const numeric = [...schema.matchAll(/^\s*(\w+): z\s*\.number\(\)/gm)].map((m) => m[1] ?? "");
    // The config has some twenty numbers (seed, timeouts, budgets, caps, the factory, the engine).
    expect(numeric.length).toBeGreaterThan(15);
    const limits = read(join(DOCS, "limits.md"));
    const missing = numeric.filter((key) => !limits.includes(key) && !(key.endsWith("_per_mtok") && limits.includes("*_per_mtok")));
    expect(missing).toEqual([]);
  });
});
