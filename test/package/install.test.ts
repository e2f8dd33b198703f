import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * The package as a user gets it (ADR-014): `npm pack`, unpacked into a scratch app's node_modules
 * with its required dependencies only — the optional ones (better-sqlite3, node-llama-cpp) absent,
 * as after `npm install --omit=optional` where the native module cannot build — then imported as a
 * user imports it (ESM, by package name) and the README's library examples type-checked against
 * the built .d.ts with `skipLibCheck: false`. Offline: the dependencies are the repo's own
 * installed copies, linked in, so the test needs no registry.
 */
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
/** The optional dependencies (SQLite, the local engine, GitHub, PostgreSQL, serve, telemetry): a library user may omit them all. */
const OPTIONAL = Object.keys(
  (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { optionalDependencies: Record<string, string> }).optionalDependencies,
);

interface Packed {
  filename: string;
  files: { path: string }[];
}

let work = "";
let app = "";
let packed: Packed;

/** Links one of the repo's installed packages into the scratch app's node_modules. */
function link(name: string): void {
  const from = join(ROOT, "node_modules", name);
  if (!existsSync(from)) throw new Error(`${name} is not installed in the repo`);
  const to = join(app, "node_modules", name);
  mkdirSync(dirname(to), { recursive: true });
  symlinkSync(from, to, "dir");
}

/** Runs an ESM snippet with node inside the scratch app. */
function node(source: string, args: string[] = []): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [...args, "--input-type=module", "-e", source], { cwd: app, encoding: "utf8", env: { PATH: process.env.PATH ?? "" } });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The ```ts blocks of the README's library section. */
function readmeExamples(): string[] {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const start = readme.indexOf("\n## Library\n");
  expect(start, "the README has a ## Library section").toBeGreaterThan(-1);
  const end = readme.indexOf("\n## ", start + 1);
  const text = readme.slice(start, end === -1 ? undefined : end);
  return [...text.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1] ?? "");
}

beforeAll(() => {
  expect(existsSync(join(ROOT, "dist/index.js")), "dist is built (npm run build)").toBe(true);
  work = mkdtempSync(join(tmpdir(), "dissent-pack-"));
  const out = execFileSync("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", work], {
    cwd: ROOT,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "ignore"],
  });
  const list = JSON.parse(out) as Packed[];
  const first = list[0];
  if (!first) throw new Error("npm pack reported nothing");
  packed = first;

  app = join(work, "app");
  const pkgDir = join(app, "node_modules", "dissent");
  mkdirSync(pkgDir, { recursive: true });
  execFileSync("tar", ["-xzf", join(work, packed.filename), "-C", pkgDir, "--strip-components=1"]);
  writeFileSync(join(app, "package.json"), JSON.stringify({ name: "user-app", private: true, type: "module" }));
  const manifest = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8")) as { dependencies: Record<string, string> };
  for (const name of Object.keys(manifest.dependencies)) link(name);
  link("@types/node"); // the user's own dev dependency, for their type-check
}, 120_000);

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

describe("npm pack: what a user installs", () => {
  it("ships the built entries, the prompts, personas and eval sets, and nothing of the repo's own", () => {
    const paths = packed.files.map((f) => f.path);
    for (const p of [
      "package.json",
      "dist/index.js",
      "dist/index.d.ts",
      "dist/ai-sdk/index.js",
      "dist/ai-sdk/index.d.ts",
      "dist/testing/index.js",
      "dist/cli/bin.js",
      "prompts/challenger.md",
    ]) {
      expect(paths).toContain(p);
    }
    expect(paths.some((p) => p.startsWith("personas/"))).toBe(true);
    expect(paths.some((p) => p.startsWith("evals/"))).toBe(true);
    expect(paths.filter((p) => /^(src|test|bench|node_modules|\.dissent|examples)\//.test(p))).toEqual([]);
  });

  it("the optional native modules are absent from the install", () => {
    for (const name of OPTIONAL) expect(existsSync(join(app, "node_modules", name))).toBe(false);
  });
});

describe("imported as a user imports it (ESM, by package name)", () => {
  it('"dissent", "dissent/ai-sdk" and "dissent/testing" run offline, loading no optional module', () => {
    const hooks = join(work, "hooks.mjs");
    writeFileSync(
      hooks,
      'export async function load(url, context, next) { if (!url.startsWith("node:")) process.stderr.write(`LOADED ${url}\\n`); return next(url, context); }\n',
    );
    const register = join(work, "register.mjs");
    writeFileSync(register, `import { register } from "node:module"; register(${JSON.stringify(new URL(`file://${hooks}`).href)});\n`);
    const r = node(
      `
      import { runAudit, createDissent, fingerprint, ProviderError } from "dissent";
      import { auditMiddleware, auditOf } from "dissent/ai-sdk";
      import { scriptedModel, auditReply, startOpenAIServer } from "dissent/testing";
      import { generateText, wrapLanguageModel } from "ai";
      const draft = "Water boils at 100 degrees Celsius at sea level, always.";
      const gate = await runAudit({ executor: scriptedModel("exec", [draft]), challenger: scriptedModel("chal", [auditReply("pass")]), prompt: "Boiling point?" });
      const wrapped = wrapLanguageModel({ model: scriptedModel("exec", [draft]), middleware: auditMiddleware({ challenger: scriptedModel("chal", [auditReply("pass")]) }) });
      const mw = await generateText({ model: wrapped, prompt: "Boiling point?" });
      const server = await startOpenAIServer(() => ({ content: "hi" }));
      await server.close();
      console.log(JSON.stringify({
        gate: gate.audit_meta.audit_verdict,
        middleware: auditOf(mw.providerMetadata)?.audit_meta.audit_verdict,
        text: mw.text === draft,
        same: fingerprint({ concern: "Missing test for the retry path." }) === fingerprint({ concern: "missing tests for retry path" }),
        kinds: [typeof createDissent, typeof ProviderError.isInstance],
      }));
    `,
      ["--import", register],
    );
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ gate: "pass", middleware: "pass", text: true, same: true, kinds: ["function", "function"] });
    const loaded = r.stderr.split("\n").filter((l) => l.startsWith("LOADED "));
    expect(loaded.some((l) => l.includes("/node_modules/dissent/dist/index.js"))).toBe(true);
    for (const name of OPTIONAL) expect(loaded.filter((l) => l.includes(`/node_modules/${name}/`))).toEqual([]);
  });

  it("internals stay internal: a deep import is refused by `exports`", () => {
    const r = node(`await import("dissent/dist/gate/run-audit.js");`);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain("ERR_PACKAGE_PATH_NOT_EXPORTED");
  });

  it("createDissent on an install without better-sqlite3: the SQLite store's error names it, and close() does not throw", () => {
    const r = node(`
      import { createDissent } from "dissent";
      const d = createDissent({ config: { providers: { p: { type: "openai-compatible", base_url: "http://127.0.0.1:9/v1" } }, routes: { default: { primary: "p:m" } } }, env: { DISSENT_HOME: ${JSON.stringify(join(work, "home"))} } });
      try { await d.run({ prompt: "hi" }); } catch (e) { console.log(JSON.stringify({ name: e.name, message: e.message })); } finally { await d.close(); }
    `);
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { name: string; message: string };
    expect(out.name).toBe("ConfigError");
    expect(out.message).toContain("better-sqlite3");
  });
});

describe("the README's library examples and examples/*.ts type-check against the built .d.ts", () => {
  it("compiles with strict and skipLibCheck: false, as a user's project would (the AI SDK's own types need lib DOM)", () => {
    const blocks = readmeExamples();
    expect(blocks.length).toBeGreaterThan(2);
    const dir = join(app, "src");
    mkdirSync(dir, { recursive: true });
    for (const [i, code] of blocks.entries()) writeFileSync(join(dir, `readme-${i + 1}.ts`), code);
    for (const f of readdirSync(join(ROOT, "examples")).filter((f) => f.endsWith(".ts"))) cpSync(join(ROOT, "examples", f), join(dir, f));
    writeFileSync(
      join(app, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "ES2022",
          module: "NodeNext",
          moduleResolution: "NodeNext",
          lib: ["ES2023", "DOM"], // the AI SDK's own .d.ts names fetch's DOM types
          types: ["node"],
          strict: true,
          noUncheckedIndexedAccess: true,
          skipLibCheck: false,
          noEmit: true,
        },
        include: ["src"],
      }),
    );
    const r = spawnSync(process.execPath, [join(ROOT, "node_modules/typescript/bin/tsc"), "-p", app, "--pretty", "false"], { cwd: app, encoding: "utf8" });
    // Ours must be clean: the examples, and every .d.ts of the package. The AI SDK's own .d.ts have
    // errors of their own under skipLibCheck: false (an untyped `json-schema` import), not ours to fix.
    const errors = (r.stdout + r.stderr).split("\n").filter((l) => /error TS/.test(l));
    const ours = errors.filter((l) => l.startsWith("src/") || l.includes("node_modules/dissent/"));
    expect(ours).toEqual([]);
    expect(
      errors.every((l) => /node_modules\/(ai|@ai-sdk)\//.test(l)),
      errors.join("\n"),
    ).toBe(true);
  }, 120_000);
});
