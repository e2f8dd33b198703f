/**
 * Every reference a user is pointed to exists (ADR-024a): each `docs/<page>.md#<anchor>` cited in
 * the code (messages and comments alike), in `--help` and in the config `dissent init` writes names a
 * page the repository has, and a heading of it by GitHub's slug; every relative link of the README
 * and of the pages resolves; and no output cites the old CONTRACT.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import GithubSlugger from "github-slugger";
import { marked, type Token, type Tokens } from "marked";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { renderInitConfig } from "../../src/cli/init.js";
import type { Io } from "../../src/cli/io.js";
import { buildProgram, run } from "../../src/cli/main.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** Every file under `dir` whose name passes `keep`. */
function files(dir: string, keep: (name: string) => boolean): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return files(p, keep);
    return keep(e.name) ? [p] : [];
  });
}

/** The markdown pages users read: the README and docs/ (the ADRs included). */
const PAGES = [join(ROOT, "README.md"), ...files(join(ROOT, "docs"), (n) => n.endsWith(".md"))];

/** The plain text of a heading's inline tokens, as GitHub renders it before slugging. */
function plain(tokens: readonly Token[]): string {
  return tokens
    .map((t) => {
      const inner = (t as { tokens?: Token[] }).tokens;
      if (inner?.length) return plain(inner);
      return t.type === "codespan" || t.type === "text" || t.type === "escape" ? (t as Tokens.Text).text : "";
    })
    .join("");
}

const anchorCache = new Map<string, Set<string>>();
/** The anchors GitHub gives a page's headings (duplicates numbered -1, -2, as it does). */
function anchorsOf(file: string): Set<string> {
  let found = anchorCache.get(file);
  if (!found) {
    const slugger = new GithubSlugger();
    const headings: string[] = [];
    marked.walkTokens(marked.lexer(readFileSync(file, "utf8")), (t) => {
      if (t.type === "heading") headings.push(slugger.slug(plain((t as Tokens.Heading).tokens)));
    });
    found = new Set(headings);
    anchorCache.set(file, found);
  }
  return found;
}

/** What is wrong with a citation `docs/page.md#anchor` (resolved from the repository root), or undefined. */
function brokenCitation(cited: string): string | undefined {
  const [path = "", anchor] = cited.split("#");
  const file = join(ROOT, path);
  if (!existsSync(file)) return `${cited}: no such page`;
  if (anchor !== undefined && !anchorsOf(file).has(anchor)) return `${cited}: no heading with that anchor in ${path}`;
  return undefined;
}

/** `docs/…md` citations in a text (not `../docs/…`, which is a relative link, checked as one). */
const CITATION = /(?<![\w./-])docs\/[\w./-]+\.md(?:#[\w-]+)?/g;
const citationsIn = (text: string) => [...text.matchAll(CITATION)].map((m) => m[0]);

/** A capturing Io for running the CLI in process (help only: nothing is read or written elsewhere). */
function captureIo(): Io & { out: string[] } {
  const out: string[] = [];
  return {
    out,
    stdout: (t) => void out.push(t),
    stderr: (t) => void out.push(t),
    readStdin: async () => undefined,
    stderrIsTTY: false,
    columns: 80,
    env: {},
    cwd: ROOT,
    signal: new AbortController().signal,
    redact: (t) => t,
  };
}

/** Every command path of the CLI: [], ["run"], ["issue"], ["issue", "plan"], … */
function commandPaths(): string[][] {
  const paths: string[][] = [];
  const visit = (c: ReturnType<typeof buildProgram>, path: string[]) => {
    paths.push(path);
    for (const sub of c.commands) visit(sub, [...path, sub.name()]);
  };
  visit(
    buildProgram(captureIo(), () => undefined),
    [],
  );
  return paths;
}

/** `dissent … --help`, as printed. */
async function help(path: string[]): Promise<string> {
  const io = captureIo();
  expect(await run([...path, "--help"], io)).toBe(0);
  return io.out.join("");
}

describe("the reference a user is pointed to exists", () => {
  it("every docs/… citation in src/ — messages and comments — names a page and a heading that exist", () => {
    const broken: string[] = [];
    for (const file of files(join(ROOT, "src"), (n) => /\.(ts|tsx|css|html)$/.test(n))) {
      for (const cited of citationsIn(readFileSync(file, "utf8"))) {
        const problem = brokenCitation(cited);
        if (problem) broken.push(`${relative(ROOT, file)}: ${problem}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it("every command's --help ends with its reference page, which exists on disk where it says", async () => {
    const paths = commandPaths();
    expect(paths.length).toBeGreaterThan(20);
    for (const path of paths) {
      const text = await help(path);
      const line = text.trimEnd().split("\n").at(-1) ?? "";
      const m = /^Reference: (docs\/\S+) \((.+)\)$/.exec(line);
      expect(m, `dissent ${path.join(" ")} --help ends with a Reference line: ${line}`).not.toBeNull();
      const [, cited = "", onDisk = ""] = m ?? [];
      expect(brokenCitation(cited), `dissent ${path.join(" ")} --help`).toBeUndefined();
      expect(statSync(onDisk).isFile()).toBe(true);
      expect(resolve(onDisk)).toBe(join(ROOT, cited.split("#")[0] ?? ""));
      expect(text).not.toMatch(/CONTRACT/);
    }
  });

  it("the config dissent init writes cites pages that exist, never CONTRACT, for every kind of finding", () => {
    for (const found of [
      { kind: "ollama" as const, url: "http://127.0.0.1:11434", models: [] },
      { kind: "openai" as const, keyEnv: "OPENAI_API_KEY" as const },
      { kind: "anthropic" as const, keyEnv: "ANTHROPIC_API_KEY" as const },
      { kind: "embedded" as const },
    ]) {
      const text = renderInitConfig(found);
      expect(text).not.toMatch(/CONTRACT/);
      expect(citationsIn(text).length).toBeGreaterThan(0);
      for (const cited of citationsIn(text)) expect(brokenCitation(cited), found.kind).toBeUndefined();
    }
  });

  it("no string the code can print cites CONTRACT (comments are rewritten in a later pass)", () => {
    const offenders: string[] = [];
    for (const file of files(join(ROOT, "src"), (n) => /\.tsx?$/.test(n))) {
      const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
      const visit = (node: ts.Node) => {
        if ((ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isTemplateLiteralToken(node)) && /CONTRACT\b/.test(node.text))
          offenders.push(`${relative(ROOT, file)}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}: ${node.text}`);
        if (ts.isTemplateExpression(node) && /CONTRACT\b/.test(node.head.text)) offenders.push(`${relative(ROOT, file)}: ${node.head.text}`);
        ts.forEachChild(node, visit);
      };
      visit(source);
    }
    expect(offenders).toEqual([]);
  });

  it("every docs/… citation and every relative link of the README and the pages resolves, anchors included", () => {
    const broken: string[] = [];
    for (const page of PAGES) {
      const text = readFileSync(page, "utf8");
      const where = relative(ROOT, page);
      // The three seed ADRs are kept as their authors wrote them, citing files of their own project.
      const seed = /ADR-(008|009|0064)-/.test(page);
      for (const cited of seed ? [] : citationsIn(text)) {
        // A citation inside docs/ written as docs/x.md is the root-relative form messages print.
        const problem = brokenCitation(cited);
        if (problem) broken.push(`${where}: ${problem}`);
      }
      marked.walkTokens(marked.lexer(text), (t) => {
        if (t.type !== "link" && t.type !== "image") return;
        const href = (t as Tokens.Link).href;
        if (/^(https?:|mailto:)/.test(href)) return;
        const [path = "", anchor] = href.split("#");
        const target = path === "" ? page : resolve(dirname(page), decodeURIComponent(path));
        if (!existsSync(target)) broken.push(`${where}: ${href}: no such file`);
        else if (anchor !== undefined && target.endsWith(".md") && !anchorsOf(target).has(anchor)) broken.push(`${where}: ${href}: no such heading`);
      });
    }
    expect(broken).toEqual([]);
  });

  it("the README is a front door: at most ~400 lines, and it maps every reference page", () => {
    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    expect(readme.split("\n").length).toBeLessThanOrEqual(400);
    for (const page of readdirSync(join(ROOT, "docs")).filter((f) => f.endsWith(".md") && f !== "README.md")) expect(readme).toContain(`(docs/${page})`);
  });
});
