import { spawn, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { transformSync } from "esbuild";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { closedPort } from "../support/e2e.js";
import { startOpenAIServer, type ChatRequest, type FakeOpenAI } from "../support/openai-server.js";
import { brokenLinks } from "../support/markdown-links.js";
import {
  appScratch,
  installApp,
  llamaCpuPackage,
  manifest,
  pack,
  packagesIn,
  ROOT,
  SQLITE_BINARY,
  treeBytes,
  withSqliteBinary,
  type Packed,
} from "../support/packed-install.js";
import { TINY_CHAT, writeTinyGguf } from "../support/tiny-gguf.js";

/**
 * The package as a user gets it (ADR-014, ADR-024, issue 31): the release tarball (`npm run release`,
 * scripts/release.mjs), then `npm install` of it into an empty folder — offline, from the npm cache
 * (test/support/packed-install.ts says how) — and used as a user uses it: the README's Quickstart
 * against the demo server the package ships, the `dissent` binary, `import … from "dissent"`, the
 * examples, the reference pages and their links. Two apps: a default install (better-sqlite3's native
 * build left out, as where it cannot build), and one where the user added the in-process engine with
 * the one command dissent names.
 */
vi.setConfig({ testTimeout: 120_000, hookTimeout: 600_000 });

const M = manifest();
/** The parts a default install leaves out (ADR-024): dissent's optional peer dependencies. */
const OPT_IN = Object.keys(M.peerDependencies);
/** Packages a default install brings but dissent runs without (npm skips them where they cannot build). */
const OPTIONAL = Object.keys(M.optionalDependencies);
/** The engine's tested version: the one command names it. */
const ENGINE = M.devDependencies["node-llama-cpp"];

let work = "";
let plain = "";
let full = "";
let quick = "";
let packed: Packed;

/** The installed `dissent` binary of an app, run as a user runs it (a clean environment). */
function dissentIn(app: string, args: string[], opts: { cwd?: string; env?: Record<string, string> } = {}) {
  const r = spawnSync(join(app, "node_modules", ".bin", "dissent"), args, {
    cwd: opts.cwd ?? app,
    encoding: "utf8",
    env: { PATH: process.env.PATH ?? "", HOME: opts.cwd ?? app, ...opts.env },
    timeout: 60_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Runs an ESM snippet with node inside an app. */
function node(app: string, source: string, args: string[] = []) {
  const r = spawnSync(process.execPath, [...args, "--input-type=module", "-e", source], { cwd: app, encoding: "utf8", env: { PATH: process.env.PATH ?? "" } });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Runs a file with node, asynchronously (a test server in this process answers it meanwhile). */
function runFile(file: string, cwd: string, env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [file], { cwd, env: { PATH: process.env.PATH ?? "", HOME: cwd, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString("utf8")));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString("utf8")));
    const timer = setTimeout(() => child.kill("SIGKILL"), 90_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** The ```ts blocks of the README and of every docs page: what a user copies. */
function documentedExamples(): { file: string; code: string }[] {
  const pages = [
    "README.md",
    ...readdirSync(join(ROOT, "docs"), { withFileTypes: true }).flatMap((e) => (e.isFile() && e.name.endsWith(".md") ? [`docs/${e.name}`] : [])),
  ];
  return pages.flatMap((page) =>
    [...readFileSync(join(ROOT, page), "utf8").matchAll(/```ts\n([\s\S]*?)```/g)].map((m, i) => ({
      file: `${page.replace(/[/.]/g, "-")}-${i + 1}.ts`,
      code: m[1] ?? "",
    })),
  );
}

beforeAll(() => {
  expect(existsSync(join(ROOT, "dist/index.js")), "dist is built (npm run build)").toBe(true);
  work = appScratch("dissent-pack-");
  packed = pack(work);
  const tarballBytes = readFileSync(join(work, packed.filename));
  const tarball = `../${packed.filename}`;
  plain = join(work, "app");
  installApp(plain, { tarball, tarballBytes });
  // The user's next step: the engine, at the version dissent names (its CPU build: GPU builds are the same code, larger).
  full = join(work, "app-with-engine");
  installApp(full, { tarball, tarballBytes, add: ["node-llama-cpp", llamaCpuPackage(), "better-sqlite3"] }, true);
  withSqliteBinary(full);
  // The README's Quickstart: an empty folder, the tarball installed as npm installs it (better-sqlite3 built by its install script).
  quick = join(work, "try-dissent");
  installApp(quick, { tarball, tarballBytes });
  withSqliteBinary(quick);
});

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

describe("the release tarball: what a user installs", () => {
  it("ships the built entries, the prompts, personas, eval sets, the docs pages, the examples and the docs' screenshots, and nothing else of the repo's own", () => {
    const paths = packed.files.map((f) => f.path);
    expect(packed.filename).toBe(`dissent-${M.version}.tgz`);
    for (const p of [
      "package.json",
      "dist/index.js",
      "dist/index.d.ts",
      "dist/ai-sdk/index.js",
      "dist/ai-sdk/index.d.ts",
      "dist/testing/index.js",
      "dist/cli/bin.js",
      "prompts/challenger.md",
      "dist/vendor/tree-sitter/tree-sitter.cjs",
      "dist/vendor/tree-sitter/tree-sitter.wasm",
      "dist/vendor/tree-sitter/tree-sitter-typescript.wasm.gz",
      "examples/demo-server.mjs",
      "examples/demo.config.yaml",
      "examples/github/dissent.yml",
      "examples/github/dissent.config.yaml",
    ]) {
      expect(paths).toContain(p);
    }
    const pages = readdirSync(join(ROOT, "docs")).filter((f) => f.endsWith(".md"));
    expect(pages.length).toBeGreaterThan(10);
    for (const page of pages) expect(paths).toContain(`docs/${page}`);
    expect(paths.some((p) => p.startsWith("personas/"))).toBe(true);
    expect(paths.some((p) => p.startsWith("evals/"))).toBe(true);
    expect(paths.filter((p) => /^(src|test|scripts|node_modules|\.dissent|\.ci)\//.test(p))).toEqual([]);
    expect(paths.filter((p) => p.startsWith("bench/") && !p.endsWith(".png"))).toEqual([]);
  });

  it("names its repository, home page and issue tracker: one GitHub repository, in npm's forms", () => {
    const installed = JSON.parse(readFileSync(join(plain, "node_modules", "dissent", "package.json"), "utf8")) as {
      repository?: { type?: string; url?: string };
      homepage?: string;
      bugs?: { url?: string };
      license?: string;
      engines?: { node?: string };
    };
    const repo = /^git\+https:\/\/github\.com\/([\w.-]+\/[\w.-]+)\.git$/.exec(installed.repository?.url ?? "")?.[1];
    expect(installed.repository?.type).toBe("git");
    expect(repo, installed.repository?.url).toBeDefined();
    expect(installed.homepage).toBe(`https://github.com/${repo}#readme`);
    expect(installed.bugs?.url).toBe(`https://github.com/${repo}/issues`);
    expect(installed.license).toBe("MIT");
    expect(installed.engines?.node).toBe(">=20");
  });

  it("every link of every markdown file inside the package leads to a file the package holds (and to a heading that exists)", () => {
    const root = join(plain, "node_modules", "dissent");
    const files = packed.files.map((f) => f.path);
    const pages = files.filter((f) => f.endsWith(".md"));
    expect(pages.length).toBeGreaterThan(40);
    expect(brokenLinks(pages, files, (f) => readFileSync(join(root, f), "utf8"))).toEqual([]);
  });

  it("a default install is at most 100 MB of files in at most 100 packages: the engine, PostgreSQL, telemetry and the MCP SDK's HTTP server (express) stay out, SQLite and serve come in", () => {
    for (const name of OPT_IN) expect(existsSync(join(plain, "node_modules", name)), `${name} is left out`).toBe(false);
    for (const name of OPTIONAL) expect(existsSync(join(plain, "node_modules", name)), `${name} comes with dissent`).toBe(true);
    const packages = packagesIn(join(plain, "node_modules"));
    expect(packages).toContain("dissent");
    // What npm wrote, plus the native binary better-sqlite3's install script adds (left out here).
    const mb = (treeBytes(join(plain, "node_modules")) + statSync(join(ROOT, "node_modules", SQLITE_BINARY)).size) / 1e6;
    const measured = `${mb.toFixed(1)} MB in ${packages.length} packages`;
    // dissent serves MCP over Hono; express comes only with the MCP SDK's own HTTP server side, which it does not use.
    expect(
      packages.filter((p) => p === "express"),
      measured,
    ).toEqual([]);
    expect(packages.length, measured).toBeLessThanOrEqual(100);
    expect(mb, measured).toBeLessThanOrEqual(100);
  });

  it("maps a repository from the install: the tree-sitter runtime and grammars come inside the package (issue 30)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "dissent-installed-map-"));
    try {
      writeFileSync(join(dir, "app.ts"), "export function greet(name: string): string {\n  return name;\n}\n");
      writeFileSync(join(dir, "tool.py"), "def run():\n    return 1\n");
      writeFileSync(
        join(dir, "dissent.config.yaml"),
        `providers:\n  local: { type: openai-compatible, base_url: "http://127.0.0.1:${await closedPort()}/v1" }\nroutes:\n  default: { primary: "local:m" }\nproject:\n  repo: .\n`,
      );
      const r = dissentIn(plain, ["doctor", "--json"], { cwd: dir });
      const out = JSON.parse(r.stdout) as { repository?: { ok: boolean; files: number; languages: Record<string, number>; detail: string } };
      expect(out.repository, r.stderr).toMatchObject({ ok: true, files: 3, languages: { typescript: 1, python: 1, yaml: 1 } });
      expect(out.repository?.detail).toContain("map built now (2 files parsed)");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("`dissent --version` runs from the install", () => {
    const r = dissentIn(plain, ["--version"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(`${M.version}\n`);
  });

  it("each opt-in part's one command names the version dissent is tested with", () => {
    for (const name of OPT_IN) {
      expect(M.peerDependenciesMeta[name]?.optional, `${name} is an optional peer`).toBe(true);
      expect(M.peerDependencies[name]?.replace(/^\^/, ""), `${name}: the peer range starts at the devDependency`).toBe(M.devDependencies[name]);
    }
  });
});

describe("imported as a user imports it (ESM, by package name)", () => {
  it('"dissent", "dissent/ai-sdk" and "dissent/testing" run offline, loading no optional or opt-in module', () => {
    const hooks = join(work, "hooks.mjs");
    writeFileSync(
      hooks,
      'export async function load(url, context, next) { if (!url.startsWith("node:")) process.stderr.write(`LOADED ${url}\\n`); return next(url, context); }\n',
    );
    const register = join(work, "register.mjs");
    writeFileSync(register, `import { register } from "node:module"; register(${JSON.stringify(new URL(`file://${hooks}`).href)});\n`);
    const r = node(
      plain,
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
    for (const name of [...OPTIONAL, ...OPT_IN]) expect(loaded.filter((l) => l.includes(`/node_modules/${name}/`))).toEqual([]);
  });

  it("internals stay internal: a deep import is refused by `exports`", () => {
    const r = node(plain, `await import("dissent/dist/gate/run-audit.js");`);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain("ERR_PACKAGE_PATH_NOT_EXPORTED");
  });

  it("createDissent where better-sqlite3 did not build: the SQLite store's error names it, and close() does not throw", () => {
    const r = node(
      plain,
      `
      import { createDissent } from "dissent";
      const d = createDissent({ config: { providers: { p: { type: "openai-compatible", base_url: "http://127.0.0.1:9/v1" } }, routes: { default: { primary: "p:m" } } }, env: { DISSENT_HOME: ${JSON.stringify(join(work, "home"))} } });
      try { await d.run({ prompt: "hi" }); } catch (e) { console.log(JSON.stringify({ name: e.name, message: e.message })); } finally { await d.close(); }
    `,
    );
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { name: string; message: string };
    expect(out.name).toBe("ConfigError");
    expect(out.message).toContain("better-sqlite3");
  });
});

describe("the README's Quickstart, from the release tarball in an empty folder", () => {
  const README = readFileSync(join(ROOT, "README.md"), "utf8");
  /** The `dissent …` lines of the Quickstart's block, as written (comments off). */
  const dissentLines = () => {
    const block = /In a checkout:\n+```bash\n([\s\S]*?)```/.exec(README)?.[1] ?? "";
    return block
      .split("\n")
      .filter((l) => l.startsWith("dissent "))
      .map((l) => l.replace(/\s+#.*$/, ""));
  };

  it("the tarball's lines are the README's, and its dissent lines run there against the demo server the package ships", async () => {
    const prose = README.replace(/\s+/g, " ");
    for (const line of [
      `npm install /path/to/dissent-${M.version}.tgz`,
      'export PATH="$PWD/node_modules/.bin:$PATH"',
      "node node_modules/dissent/examples/demo-server.mjs &",
      "export DISSENT_CONFIG=node_modules/dissent/examples/demo.config.yaml",
    ])
      expect(prose).toContain(line);
    const lines = dissentLines();
    expect(lines).toEqual([
      'dissent run --audit "How much paracetamol can I take?"',
      'dissent run --audit --json "How much paracetamol can I take?"',
      'dissent issue new --title "Retry 503s in the HTTP client" --body "Our client gives up on the first 503."',
      "dissent issue plan 1",
      "dissent events --issue 1",
    ]);

    // `node node_modules/dissent/examples/demo-server.mjs &`, on a free port (the config below names it instead of 8787).
    const demo = spawn(process.execPath, ["node_modules/dissent/examples/demo-server.mjs"], {
      cwd: quick,
      env: { PATH: process.env.PATH ?? "", PORT: "0" },
      stdio: ["ignore", "ignore", "pipe"],
    });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let said = "";
        demo.stderr.on("data", (d: Buffer) => {
          said += d.toString("utf8");
          const m = /demo model server on (http:\/\/127\.0\.0\.1:\d+\/v1)/.exec(said);
          if (m?.[1]) resolve(m[1]);
        });
        demo.on("exit", (code) => reject(new Error(`the demo server exited (${code}): ${said}`)));
      });
      const config = readFileSync(join(quick, "node_modules/dissent/examples/demo.config.yaml"), "utf8");
      expect(config).toContain('base_url: "http://127.0.0.1:8787/v1"');
      writeFileSync(join(quick, "demo.config.yaml"), config.replace("http://127.0.0.1:8787/v1", url));
      const sh = (line: string) => {
        const r = spawnSync("bash", ["-c", line], {
          cwd: quick,
          encoding: "utf8",
          env: { PATH: `${join(quick, "node_modules/.bin")}:${process.env.PATH ?? ""}`, HOME: quick, DISSENT_CONFIG: "demo.config.yaml" },
          timeout: 90_000,
        });
        return { code: r.status, stdout: r.stdout, stderr: r.stderr };
      };
      const [audit, auditJson, newIssue, plan, events] = lines.map(sh) as [
        ReturnType<typeof sh>,
        ReturnType<typeof sh>,
        ReturnType<typeof sh>,
        ReturnType<typeof sh>,
        ReturnType<typeof sh>,
      ];
      // What the README says each shows.
      expect(audit.code, audit.stderr).toBe(0);
      expect(audit.stdout).toContain("the usual maximum is 4 g in 24 hours");
      expect(audit.stdout).not.toContain("8 g a day");
      expect(audit.stderr).toMatch(/revision/i);
      const out = JSON.parse(auditJson.stdout) as { audit: { concerns: { evidence: string }[] }; audit_meta: { revision_drift?: unknown } };
      expect(out.audit.concerns.map((c) => c.evidence)).toEqual(expect.arrayContaining(["most adults can take 8 g a day", "completely safe at any dose"]));
      expect(out.audit_meta.revision_drift).toBeDefined();
      expect(newIssue.code, newIssue.stderr).toBe(0);
      expect(plan.code, plan.stderr).toBe(0);
      expect(plan.stdout).toMatch(/^issue 1: load_bearing/);
      expect(plan.stdout).toContain("status: ready");
      expect(events.code, events.stderr).toBe(0);
      expect(events.stdout).toContain("AdversarialStageCompleted");
      // State went where the README says, and nothing into the package's folder.
      expect(existsSync(join(quick, ".dissent"))).toBe(true);
      expect(readdirSync(join(quick, "node_modules/dissent")).filter((f) => f.startsWith("."))).toEqual([]);
    } finally {
      demo.kill("SIGTERM");
    }
  });
});

describe("the in-process engine is one command away", () => {
  // Into the project dissent was installed in, named: the user may run dissent from anywhere.
  const add = () => `npm install --prefix ${plain} node-llama-cpp@${ENGINE}`;

  it("with no config, no Ollama and no key, `dissent run` says why and the one command that adds the engine — and downloads nothing", async () => {
    const ollama = `http://127.0.0.1:${await closedPort()}`;
    const hf = `http://127.0.0.1:${await closedPort()}`;
    const home = mkdtempSync(join(work, "user-"));
    const r = dissentIn(plain, ["run", "--audit", "What is 2+2?"], { cwd: home, env: { DISSENT_OLLAMA_URL: ollama, HF_ENDPOINT: hf } });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toBe(
      `dissent: error: no config file, no Ollama at ${ollama} and neither OPENAI_API_KEY nor ANTHROPIC_API_KEY set, and the embedded engine that would run models in dissent's own process is not installed: run ${add()} (docs/local-engine.md#adding-the-engine); or start Ollama, or set an API key\n`,
    );
    expect(existsSync(join(home, ".cache", "dissent", "models"))).toBe(false);
  });

  it("`dissent init` with nothing found and no engine writes nothing, and says what to install or to name; once the engine is added it writes the embedded pair", async () => {
    const home = mkdtempSync(join(work, "user-"));
    const ollama = `http://127.0.0.1:${await closedPort()}`;
    const env = { DISSENT_OLLAMA_URL: ollama };
    const r = dissentIn(plain, ["init"], { cwd: home, env });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toBe(
      `dissent: error: found no models to write a config for: no Ollama at ${ollama}, neither OPENAI_API_KEY nor ANTHROPIC_API_KEY set, and the in-process engine is not installed: run ${add()} (docs/local-engine.md#adding-the-engine), or for a server of your own (vLLM, LM Studio, a gateway) dissent init --base-url URL [--model M]\n`,
    );
    expect(existsSync(join(home, "dissent.config.yaml"))).toBe(false);
    // Once added, init writes the embedded pair.
    const added = dissentIn(full, ["init", "--json"], { cwd: mkdtempSync(join(work, "user-")), env });
    expect(added.code, added.stderr).toBe(0);
    expect(JSON.parse(added.stdout)).toMatchObject({ found: "embedded", engine: { installed: true } });
  });

  it("once added, a llama-cpp route runs the audit gate in the process", () => {
    const home = mkdtempSync(join(work, "user-"));
    writeTinyGguf(join(home, "tiny.gguf"), TINY_CHAT);
    writeFileSync(
      join(home, "dissent.config.yaml"),
      [
        "providers:",
        '  tiny: { type: llama-cpp, model: "./tiny.gguf", threads: 1, gpu: false, context_size: 8192 }',
        "routes:",
        '  executor: { primary: "tiny:drafter" }',
        '  challenger: { primary: "tiny:judge" }',
      ].join("\n"),
    );
    const r = dissentIn(full, ["run", "--audit", "--json", "What is 2+2?"], { cwd: home });
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { audit_meta: { challenger_status: string }; run: { calls: { role: string; provider: string }[] } };
    expect(out.audit_meta.challenger_status).toBe("ok");
    expect(out.run.calls.map((c) => `${c.role} ${c.provider}`)).toEqual(["executor tiny", "challenger tiny"]);
  });
});

describe("the README's and the docs' TypeScript, and examples/*.ts, type-check against the built .d.ts", () => {
  it("compiles with strict and skipLibCheck: false, as a user's project would (the AI SDK's own types need lib DOM)", () => {
    const blocks = documentedExamples();
    expect(blocks.length).toBeGreaterThan(4);
    const dir = join(plain, "src");
    mkdirSync(dir, { recursive: true });
    for (const b of blocks) writeFileSync(join(dir, b.file), b.code);
    for (const f of readdirSync(join(ROOT, "examples")).filter((f) => f.endsWith(".ts"))) cpSync(join(ROOT, "examples", f), join(dir, f));
    writeFileSync(
      join(plain, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "ES2022",
          module: "NodeNext",
          moduleResolution: "NodeNext",
          lib: ["ES2023", "DOM"], // the AI SDK's own .d.ts names fetch's DOM types
          typeRoots: [join(ROOT, "node_modules", "@types")], // the user's own @types/node, not part of dissent's install
          types: ["node"],
          strict: true,
          noUncheckedIndexedAccess: true,
          skipLibCheck: false,
          noEmit: true,
        },
        include: ["src"],
      }),
    );
    const r = spawnSync(process.execPath, [join(ROOT, "node_modules/typescript/bin/tsc"), "-p", plain, "--pretty", "false"], { cwd: plain, encoding: "utf8" });
    // Ours must be clean: the examples, and every .d.ts of the package. The AI SDK's own .d.ts have
    // errors of their own under skipLibCheck: false (an untyped `json-schema` import), not ours to fix.
    const errors = (r.stdout + r.stderr).split("\n").filter((l) => /error TS/.test(l));
    const ours = errors.filter((l) => l.startsWith("src/") || l.includes("node_modules/dissent/"));
    expect(ours).toEqual([]);
    expect(
      errors.every((l) => /node_modules\/(ai|@ai-sdk)\//.test(l)),
      errors.join("\n"),
    ).toBe(true);
  });
});

describe("the examples run against an OpenAI-compatible server as written: no warning, two model families", () => {
  let server: FakeOpenAI;
  /** What each request asked for: the reply schema's first key (`verdict`, `findings`, …) or `text`. */
  const kind = (req: ChatRequest): string => {
    const schema = (req.body.response_format?.json_schema as { schema?: { properties?: Record<string, unknown> } } | undefined)?.schema;
    const keys = Object.keys(schema?.properties ?? {});
    return keys.find((k) => ["verdict", "findings", "acceptance_criteria"].includes(k)) ?? (req.body.response_format ? "json" : "text");
  };
  beforeAll(async () => {
    server = await startOpenAIServer((req) => {
      switch (kind(req)) {
        case "verdict":
          return { content: JSON.stringify({ concerns: [], verdict: "pass" }) };
        case "findings":
          return { content: JSON.stringify({ findings: [] }) };
        case "acceptance_criteria":
          return { content: JSON.stringify({ acceptance_criteria: ["A GET answered 503 then 200 succeeds after one retry."] }) };
        default:
          return { content: "# Retry on 503\n\nRetry GET, PUT and DELETE up to three times with exponential backoff; honour Retry-After; never retry POST." };
      }
    });
  });
  afterAll(async () => {
    await server?.close();
  });

  /** examples/NAME.ts, compiled as a user's tsx would, inside the app with the engine (it has SQLite). */
  const example = (name: string) => {
    const dir = join(full, "examples");
    mkdirSync(dir, { recursive: true });
    const file = join(dir, `${name}.mjs`);
    writeFileSync(file, transformSync(readFileSync(join(ROOT, "examples", `${name}.ts`), "utf8"), { loader: "ts", format: "esm", target: "node20" }).code);
    return file;
  };

  it("ai-sdk-middleware: the challenger gets a json_schema reply format, and nothing prints an AI SDK warning", async () => {
    const before = server.requests.length;
    const r = await runFile(example("ai-sdk-middleware"), join(full, "examples"), { OLLAMA_BASE_URL: server.url });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("Retry GET, PUT and DELETE");
    expect(`${r.stdout}\n${r.stderr}`).not.toMatch(/AI SDK Warning/);
    const audits = server.requests.slice(before).filter((q) => kind(q) === "verdict");
    expect(audits.length).toBe(2); // generateText and streamText, each audited once
    expect(audits.map((q) => [q.body.model, q.body.response_format?.type])).toEqual([
      ["llama3.1:8b", "json_schema"],
      ["llama3.1:8b", "json_schema"],
    ]);
  });

  it("embed-pipeline: plans the issue with Qwen writing and Llama judging, and no same-model warning", async () => {
    const before = server.requests.length;
    const cwd = mkdtempSync(join(full, "examples", "project-"));
    const r = await runFile(example("embed-pipeline"), cwd, { OLLAMA_BASE_URL: server.url });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^#1: ready \(load_bearing\)/);
    expect(r.stderr.split("\n").filter((l) => l.startsWith("warning:"))).toEqual([]);
    const asked = server.requests.slice(before);
    const models = (k: string) => [...new Set(asked.filter((q) => kind(q) === k).map((q) => q.body.model))];
    expect(models("findings")).toEqual(["llama3.1:8b"]); // every critic and the plan reviewer
    expect(models("text")).toEqual(["qwen3:8b"]); // every producer
    expect(asked.filter((q) => kind(q) === "findings")).toHaveLength(4 + 4 + 4 + 1 + 1); // one converged round of each council, the spec judge, the reviewer
  });
});
