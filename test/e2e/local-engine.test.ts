import { copyFileSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dissent, scratch, type CliResult } from "../support/cli.js";
import { errorLine, parseJsonOut } from "../support/e2e.js";
import { TINY_CHAT, writeTinyGguf, type TinyGguf } from "../support/tiny-gguf.js";
import { blockNodeLlamaCpp, flipByte, startFakeHuggingFace, type TestServer } from "../engines/support.js";
import { hidingPackages } from "../support/hide-packages.js";

// `dissent run --audit` on a model inside the process (docs/local-engine.md), as a user runs it: a tiny GGUF
// written by the test, one thread (more threads are far slower on a model this small).
let s: ReturnType<typeof scratch>;
let tiny: TinyGguf;
let block: string;
const home = () => join(s.dir, "home");
const config = (model: string, extra = "") =>
  [
    "providers:",
    `  tiny: { type: llama-cpp, model: ${JSON.stringify(model)}, threads: 1, gpu: false, context_size: 8192 }`,
    "routes:",
    '  executor: { primary: "tiny:drafter" }',
    '  challenger: { primary: "tiny:judge" }',
    "seed: 7",
    extra,
  ].join("\n");
/**
 * Executor and challenger share the tiny model here, so `run --audit` warns that they are the same
 * model (issue 32: the resolved file, not the alias) — asserted once below, left out of every other check.
 */
const SAME_MODEL =
  /^dissent: warning: run --audit: executor and challenger use the same model \(the model file [^)]+\.gguf\); a model reviewing itself is weak dissent — route the reviewer to another model family\n/m;
const run = async (file: string, args: string[], env: Record<string, string> = {}): Promise<CliResult> => {
  const r = await dissent([...args, "--config", file], { cwd: s.dir, env: { DISSENT_HOME: home(), ...env }, timeoutMs: 60_000 });
  return { ...r, stderr: r.stderr.replace(SAME_MODEL, "") };
};

beforeAll(() => {
  s = scratch("dissent-local-");
  tiny = writeTinyGguf(join(s.dir, "tiny.gguf"), TINY_CHAT);
  block = blockNodeLlamaCpp(s.dir);
  s.write("tiny.yaml", config("./tiny.gguf"));
});
afterAll(() => s.cleanup());

describe("the audit gate on an in-process model", () => {
  it("executor and challenger on the tiny model: a valid audit, the challenger ok, tokens counted", async () => {
    const out = parseJsonOut(await run("tiny.yaml", ["run", "--audit", "--json", "What is 2+2?"]));
    expect(out.audit_meta.challenger_status).toBe("ok");
    expect(out.audit_meta.audit_used).toBe(true);
    expect(["pass", "needs_work"]).toContain(out.audit_meta.audit_verdict);
    expect(out.final_output).toBe('"');
    const [exec, chal] = out.run.calls;
    expect(exec).toMatchObject({ role: "executor", provider: "tiny", model: "drafter", cached: false });
    expect(chal).toMatchObject({ role: "challenger", provider: "tiny", model: "judge", cached: false });
    expect(chal?.input_tokens).toBeGreaterThan(100);
    expect(chal?.output_tokens).toBeGreaterThan(5);
  }, 60_000);

  it("the same run again is answered from the cache without loading node-llama-cpp", async () => {
    const r = await run("tiny.yaml", ["run", "--audit", "--json", "What is 2+2?"], { NODE_OPTIONS: block });
    const out = parseJsonOut(r);
    expect(out.run.calls.every((c) => c.cached)).toBe(true);
    expect(r.stderr).toBe("");
  });

  it("the cache follows the file's hash: a copy elsewhere hits it, one changed byte misses", async () => {
    mkdirSync(join(s.dir, "elsewhere"), { recursive: true });
    copyFileSync(tiny.path, join(s.dir, "elsewhere", "copy.gguf"));
    s.write("copy.yaml", config("./elsewhere/copy.gguf"));
    const hit = parseJsonOut(await run("copy.yaml", ["run", "--audit", "--json", "What is 2+2?"], { NODE_OPTIONS: block }));
    expect(hit.run.calls.every((c) => c.cached)).toBe(true);

    flipByte(join(s.dir, "elsewhere", "copy.gguf"));
    const miss = parseJsonOut(await run("copy.yaml", ["run", "--audit", "--json", "What is 2+2?"]));
    expect(miss.run.calls.map((c) => c.cached)).toEqual([false, false]);
  }, 60_000);

  it("the challenger on the same GGUF under another alias is the same model: one warning naming the file", async () => {
    const r = await dissent(["run", "--audit", "--config", "tiny.yaml", "What is 2+2?"], { cwd: s.dir, env: { DISSENT_HOME: home() }, timeoutMs: 60_000 });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe(
      `dissent: warning: run --audit: executor and challenger use the same model (the model file ${tiny.path}); a model reviewing itself is weak dissent — route the reviewer to another model family\n`,
    );
  });

  it("in-process calls are local, not network: --verbose and the event log say so", async () => {
    const r = await run("tiny.yaml", ["run", "--verbose", "--no-cache", "What is 3+3?"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/^dissent: call executor\s+tiny:drafter \(primary\) {2}local {2}\d+ ms {2}in \d+ \/ out \d+ tokens$/m);
    expect(r.stderr).not.toContain("network");
    const events = await run("tiny.yaml", ["events"]);
    const calls = events.stdout.split("\n").filter((l) => l.includes(" ModelCall "));
    expect(calls.length).toBeGreaterThan(0);
    for (const l of calls) expect(l).toMatch(/ tiny:(drafter|judge) (local|cached) \d+ms/);
    expect(calls.some((l) => / local /.test(l))).toBe(true);
  });

  it("a reply that runs into the end of the context names the context and its size, not max_tokens, and is not retried", async () => {
    // No end-of-text bias: greedy decoding writes on until the context is full.
    writeTinyGguf(join(s.dir, "endless.gguf"), { contextLength: 8192 });
    s.write("endless.yaml", config("./endless.gguf").replace("context_size: 8192", "context_size: 1024"));
    const r = await run("endless.yaml", ["run", "--no-cache", "What is 2+2?"]);
    expect(r.code, r.stderr).toBe(1);
    expect(errorLine(r)).toMatch(
      /^dissent: error: provider 'tiny' \(drafter\) ran into the end of its context \(\d+ tokens, prompt and reply together\) before the reply was done: raise context_size for provider 'tiny', or shorten the prompt; not retried: this in-process model answers the same request the same way \(temperature 0, seed 7\)$/,
    );
    expect(r.stderr).not.toContain("max_tokens");
  }, 60_000);

  it("--version with a llama-cpp route configured never loads the engine", async () => {
    const r = await dissent(["--version"], { cwd: s.dir, env: { DISSENT_CONFIG: "tiny.yaml", NODE_OPTIONS: block } });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
  });
});

describe("a model that cannot be used ends the run in one line naming the file (exit 2)", () => {
  const fails = async (model: string, extra = "", env: Record<string, string> = {}) => {
    const name = `bad-${Math.random().toString(36).slice(2)}.yaml`;
    s.write(name, config(model, extra));
    const r = await run(name, ["run", "--audit", "hello"], env);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    return errorLine(r);
  };

  it("a missing file", async () => {
    expect(await fails("./nope.gguf")).toBe(
      `dissent: error: model file not found: ${join(s.dir, "nope.gguf")} (providers.tiny.model): check the path, or name an hf: model to download`,
    );
  });

  it("a corrupt (truncated) file, and one that is not a GGUF at all", async () => {
    writeTinyGguf(join(s.dir, "cut.gguf"), { ...TINY_CHAT, truncateTo: 300_000 });
    expect(await fails("./cut.gguf")).toMatch(/^dissent: error: model file .*cut\.gguf is corrupt or incomplete: delete it and download it again \(.+\)$/);
    s.write("notes.gguf", "these are notes, not weights");
    expect(await fails("./notes.gguf")).toMatch(/^dissent: error: model file .*notes\.gguf is not a GGUF file: point providers\.tiny\.model at a \.gguf model/);
  });

  it("offline (offline: true or DISSENT_OFFLINE=1): an hf: model not yet here names the file to place", async () => {
    const dir = join(s.dir, "offline-models");
    const want = `dissent: error: offline: hf:acme/absent-GGUF:Q4_K_M is not in ${dir}: place its .gguf file at ${join(dir, "hf_acme_absent.Q4_K_M.gguf")} (from https://huggingface.co/acme/absent-GGUF), or turn offline off to download it`;
    expect(await fails("hf:acme/absent-GGUF:Q4_K_M", `models_dir: offline-models\noffline: true`)).toBe(want);
    expect(await fails("hf:acme/absent-GGUF:Q4_K_M", "models_dir: offline-models", { DISSENT_OFFLINE: "1" })).toBe(want);
  });
});

describe("an hf: model is downloaded once, with progress, and reused", () => {
  let hf: TestServer;
  beforeAll(async () => {
    const bytes = readFileSync(tiny.path);
    hf = await startFakeHuggingFace((user, repo) => (user === "acme" && repo === "tiny-GGUF" ? bytes : undefined));
  });
  afterAll(() => hf.close());

  it("the first run downloads it into models_dir, saying so on stderr; the next run asks nothing", async () => {
    s.write("hf.yaml", config("hf:acme/tiny-GGUF:Q4_K_M", "models_dir: hf-models"));
    const env = { HF_ENDPOINT: `${hf.url}/` };
    const first = await run("hf.yaml", ["run", "--audit", "--json", "first"], env);
    const out = parseJsonOut(first);
    expect(out.audit_meta.challenger_status).toBe("ok");
    const dest = join(s.dir, "hf-models");
    expect(first.stderr).toBe(
      `dissent: downloading hf:acme/tiny-GGUF:Q4_K_M (470 KB) into ${dest}\ndissent: downloaded hf:acme/tiny-GGUF:Q4_K_M (470 KB) to ${join(dest, "hf_acme_tiny.Q4_K_M.gguf")}\n`,
    );
    expect(hf.hits.filter((h) => h.includes("/manifests/")).length).toBe(1);
    const asked = hf.hits.length;

    const second = await run("hf.yaml", ["run", "--audit", "--json", "second"], env);
    expect(parseJsonOut(second).run.calls.some((c) => !c.cached)).toBe(true);
    expect(second.stderr).toBe("");
    expect(hf.hits.length).toBe(asked);
  }, 60_000);
});

describe("without node-llama-cpp (a default install leaves the engine out, ADR-024)", () => {
  const version = (JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { devDependencies: Record<string, string> })
    .devDependencies["node-llama-cpp"];
  // The CLI runs from this checkout: the hint installs into it, named.
  const checkout = fileURLToPath(new URL("../..", import.meta.url)).replace(/\/$/, "");
  const line = `dissent: error: provider type llama-cpp needs node-llama-cpp, which a default install of dissent leaves out: run npm install --prefix ${checkout} node-llama-cpp@${version} (docs/local-engine.md#adding-the-engine)`;

  it("a model file configured: exit 2, one line with the one command that adds the engine", async () => {
    const r = await run("tiny.yaml", ["run", "--audit", "--json", "A question never asked before?"], {
      NODE_OPTIONS: hidingPackages(s.dir, ["node-llama-cpp"]),
    });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toBe(`${line}\n`);
  });

  it("two hf: models not yet downloaded: the same line, before any download is announced or begun", async () => {
    const hf = await startFakeHuggingFace(() => readFileSync(tiny.path));
    try {
      s.write(
        "hf-missing.yaml",
        [
          "providers:",
          '  drafts: { type: llama-cpp, model: "hf:acme/one-GGUF:Q4_K_M", threads: 1, gpu: false }',
          '  judges: { type: llama-cpp, model: "hf:acme/two-GGUF:Q4_K_M", threads: 1, gpu: false }',
          "routes:",
          '  executor: { primary: "drafts:one" }',
          '  challenger: { primary: "judges:two" }',
          "models_dir: never-models",
        ].join("\n"),
      );
      const r = await run("hf-missing.yaml", ["run", "--audit", "hello"], {
        HF_ENDPOINT: `${hf.url}/`,
        NODE_OPTIONS: hidingPackages(s.dir, ["node-llama-cpp"]),
      });
      expect(r.code).toBe(2);
      expect(r.stderr).toBe(`${line}\n`);
      expect(hf.hits).toEqual([]);
    } finally {
      await hf.close();
    }
  });
});
