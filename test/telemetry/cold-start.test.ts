/**
 * Telemetry is off by default and costs nothing then (docs/serve.md): with no endpoint, neither
 * dist/telemetry nor any @opentelemetry package is loaded by the CLI — statically or at run time.
 * The attribute names written out in src/telemetry/conventions.ts are the conventions' own.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { spawn } from "node:child_process";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it, vi } from "vitest";
import { DISSENT, ERROR_TYPE, EVALUATION_RESULT_EVENT, GEN_AI, OPERATION } from "../../src/telemetry/conventions.js";
import { BIN } from "../support/cli.js";
import { serveWorld, type ServeWorld } from "../serve/world.js";
import { startReceiver, type Receiver } from "./receiver.js";

vi.setConfig({ testTimeout: 60_000 });

/** The files a module imports statically (import … from / export … from), followed through relative paths. */
function staticGraph(entry: string): { files: Set<string>; packages: Set<string> } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string) => {
    if (files.has(file)) return;
    files.add(file);
    const text = readFileSync(file, "utf8");
    for (const m of text.matchAll(/^\s*(?:import|export)\s[^"'`;]*?from\s*["']([^"']+)["']|^\s*import\s*["']([^"']+)["']/gm)) {
      const spec = m[1] ?? m[2] ?? "";
      if (spec.startsWith(".")) visit(resolve(dirname(file), spec));
      else packages.add(spec);
    }
  };
  visit(entry);
  return { files, packages };
}

describe("with telemetry off", () => {
  it("the CLI's and the library's static import graphs hold neither src/telemetry nor the OpenTelemetry SDK", () => {
    for (const entry of [
      BIN,
      fileURLToPath(new URL("../../dist/index.js", import.meta.url)),
      fileURLToPath(new URL("../../dist/dissent.js", import.meta.url)),
    ]) {
      const { files, packages } = staticGraph(entry);
      expect(
        [...files].filter((f) => f.includes("/telemetry/")),
        entry,
      ).toEqual([]);
      expect(
        [...packages].filter((p) => p.startsWith("@opentelemetry/") && p !== "@opentelemetry/api"),
        entry,
      ).toEqual([]);
    }
  });

  let w: ServeWorld | undefined;
  let r: Receiver | undefined;
  let scratchDir: string | undefined;
  afterEach(async () => {
    await w?.close();
    await r?.close();
    if (scratchDir) rmSync(scratchDir, { recursive: true, force: true });
    w = r = scratchDir = undefined;
  });

  /** Runs the CLI with a module hook that logs every URL it resolves. */
  async function loadedBy(world: ServeWorld, args: string[], env: Record<string, string> = {}): Promise<string[]> {
    scratchDir = mkdtempSync(join(tmpdir(), "dissent-loads-"));
    const log = join(scratchDir, "loaded.txt");
    writeFileSync(
      join(scratchDir, "hooks.mjs"),
      'import { appendFileSync } from "node:fs";\nexport async function resolve(s, c, next) { const r = await next(s, c); appendFileSync(process.env.DISSENT_LOAD_LOG, r.url + "\\n"); return r; }\n',
    );
    writeFileSync(join(scratchDir, "register.mjs"), 'import { register } from "node:module";\nregister("./hooks.mjs", import.meta.url);\n');
    const code = await new Promise<number | null>((done, fail) => {
      const child = spawn(process.execPath, ["--import", join(scratchDir ?? "", "register.mjs"), BIN, ...args], {
        cwd: world.dir,
        env: { PATH: process.env.PATH ?? "", HOME: world.dir, DISSENT_HOME: world.home, DISSENT_LOAD_LOG: log, ...env },
        stdio: "ignore",
      });
      child.on("error", fail);
      child.on("close", done);
    });
    expect(code).toBe(0);
    return existsSync(log) ? readFileSync(log, "utf8").split("\n").filter(Boolean) : [];
  }

  it("a run and a plan load none of it; with an endpoint they do", async () => {
    w = await serveWorld();
    const id = await w.newIssue("Quick", "A trivial issue.", ["dissent-trivial"]);
    for (const args of [
      ["run", "--audit", "hello"],
      ["issue", "plan", id],
    ]) {
      const loaded = await loadedBy(w, args);
      expect(loaded.length).toBeGreaterThan(10);
      // (@opentelemetry/api itself comes with the AI SDK, which instruments its own calls; ours is the rest.
      // The CLI is one bundle, so dissent's own telemetry shows as the SDK packages it imports.)
      expect(
        loaded.filter((u) => /@opentelemetry\/(?!api\/)/.test(u)),
        args.join(" "),
      ).toEqual([]);
    }
    r = await startReceiver();
    const loaded = await loadedBy(w, ["run", "--audit", "hello again"], { OTEL_EXPORTER_OTLP_ENDPOINT: r.url });
    expect(loaded.some((u) => u.includes("@opentelemetry/sdk-trace-base"))).toBe(true);
    expect(loaded.some((u) => u.includes("@opentelemetry/exporter-trace-otlp-http"))).toBe(true);
  });
});

describe("the conventions' names", () => {
  it("are the strings @opentelemetry/semantic-conventions ships", async () => {
    const sc = (await import("@opentelemetry/semantic-conventions/incubating")) as unknown as Record<string, string>;
    const pairs: [string, string][] = [
      [GEN_AI.OPERATION_NAME, "ATTR_GEN_AI_OPERATION_NAME"],
      [GEN_AI.PROVIDER_NAME, "ATTR_GEN_AI_PROVIDER_NAME"],
      [GEN_AI.REQUEST_MODEL, "ATTR_GEN_AI_REQUEST_MODEL"],
      [GEN_AI.REQUEST_SEED, "ATTR_GEN_AI_REQUEST_SEED"],
      [GEN_AI.REQUEST_TEMPERATURE, "ATTR_GEN_AI_REQUEST_TEMPERATURE"],
      [GEN_AI.REQUEST_MAX_TOKENS, "ATTR_GEN_AI_REQUEST_MAX_TOKENS"],
      [GEN_AI.USAGE_INPUT_TOKENS, "ATTR_GEN_AI_USAGE_INPUT_TOKENS"],
      [GEN_AI.USAGE_OUTPUT_TOKENS, "ATTR_GEN_AI_USAGE_OUTPUT_TOKENS"],
      [GEN_AI.RESPONSE_FINISH_REASONS, "ATTR_GEN_AI_RESPONSE_FINISH_REASONS"],
      [GEN_AI.OUTPUT_TYPE, "ATTR_GEN_AI_OUTPUT_TYPE"],
      [GEN_AI.WORKFLOW_NAME, "ATTR_GEN_AI_WORKFLOW_NAME"],
      [GEN_AI.SYSTEM_INSTRUCTIONS, "ATTR_GEN_AI_SYSTEM_INSTRUCTIONS"],
      [GEN_AI.INPUT_MESSAGES, "ATTR_GEN_AI_INPUT_MESSAGES"],
      [GEN_AI.OUTPUT_MESSAGES, "ATTR_GEN_AI_OUTPUT_MESSAGES"],
      [GEN_AI.EVALUATION_NAME, "ATTR_GEN_AI_EVALUATION_NAME"],
      [GEN_AI.EVALUATION_SCORE_LABEL, "ATTR_GEN_AI_EVALUATION_SCORE_LABEL"],
      [GEN_AI.EVALUATION_SCORE_VALUE, "ATTR_GEN_AI_EVALUATION_SCORE_VALUE"],
      [GEN_AI.EVALUATION_EXPLANATION, "ATTR_GEN_AI_EVALUATION_EXPLANATION"],
      [ERROR_TYPE, "ATTR_ERROR_TYPE"],
      [EVALUATION_RESULT_EVENT, "EVENT_GEN_AI_EVALUATION_RESULT"],
      [OPERATION.CHAT, "GEN_AI_OPERATION_NAME_VALUE_CHAT"],
      [OPERATION.INVOKE_WORKFLOW, "GEN_AI_OPERATION_NAME_VALUE_INVOKE_WORKFLOW"],
    ];
    for (const [ours, name] of pairs) expect(sc[name], name).toBe(ours);
    expect(Object.values(DISSENT).every((k) => k.startsWith("dissent."))).toBe(true);
  });
});
