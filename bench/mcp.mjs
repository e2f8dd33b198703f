// npm run bench (issue 23): what an MCP `challenge` tool call costs over the library, in one process.
//
// The same realistic model double (perfect quirks, so every path does the same work) answers three
// paths, interleaved run by run: `runAudit` (executor → challenger → revision: what an agent would
// otherwise call), the library's `challenge` (the challenger alone, no store), and the `challenge`
// tool over an in-memory MCP transport pair into `createDissent` (store, cache write, ModelCall
// event, redaction, schema validation on both sides). Every run's draft differs, so no path is
// served from a cache. Figures are medians of per-call times; compare them within this run only.
// Writes bench/results.mcp.json and prints a table.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { median, recorder } from "./lib.mjs";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const RUNS = Number(process.argv[process.argv.indexOf("--runs") + 1]) || 60;

/** The test support (the double) compiled to JS for this script, as bench/councils.mjs does. */
function buildSupport() {
  const out = join(ROOT, "bench", ".build");
  execFileSync("npx", ["tsc", "-p", "tsconfig.json", "--outDir", out, "--noEmit", "false", "--declaration", "false", "--sourceMap", "false"], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "pipe"],
  });
  return out;
}

const imp = (path) => import(pathToFileURL(path).href);
const support = buildSupport();
const { startRealisticDouble, perfect } = await imp(join(support, "test/support/double/index.js"));
const { createDissent, runAudit, challenge } = await imp(join(ROOT, "dist/index.js"));
const { createMcpServer } = await imp(join(ROOT, "dist/mcp/server.js"));
const { Client } = await import("@modelcontextprotocol/client");
const { InMemoryTransport } = await import("@modelcontextprotocol/server");
const { createOpenAICompatible } = await import("@ai-sdk/openai-compatible");

const PROMPT = "How much paracetamol can I take?";
const BAD = "Adults can safely take up to 8 g of paracetamol a day.";
const DRAFT = `Paracetamol is a common painkiller for mild pain and fever. ${BAD} Always read the label.`;
const scenario = {
  drafts: {
    [PROMPT]: {
      draft: DRAFT,
      defects: [{ sentence: BAD, category: "factual_risk", severity: "critical", concern: "8 g a day is twice the maximum adult dose." }],
    },
  },
};

const double = await startRealisticDouble({ seed: 7, quirks: perfect, scenario });
const home = mkdtempSync(join(tmpdir(), "dissent-bench-mcp-"));
writeFileSync(
  join(home, "dissent.config.yaml"),
  [
    "providers:",
    `  local: { type: openai-compatible, base_url: "${double.url}" }`,
    "routes:",
    '  executor: { primary: "local:exec-model" }',
    '  challenger: { primary: "local:chal-model" }',
    "seed: 7",
    `home: "${join(home, "state")}"`,
    "",
  ].join("\n"),
);
const d = createDissent({ config: join(home, "dissent.config.yaml"), env: {}, cwd: home, onWarning: () => undefined });
const server = createMcpServer(() => d);
const client = new Client({ name: "bench", version: "1" });
const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
await Promise.all([server.connect(serverSide), client.connect(clientSide)]);

const provider = createOpenAICompatible({ name: "local", baseURL: double.url });
const executor = provider.chatModel("exec-model");
const challenger = provider.chatModel("chal-model");
const quiet = { onWarning: () => undefined, seed: 7 };

const times = { runAudit: [], library: [], mcp: [] };
const verdicts = new Set();
const timed = async (list, fn) => {
  const t0 = performance.now();
  const out = await fn();
  list.push(performance.now() - t0);
  return out;
};
// A different draft every run (a note at its end), the same for the three paths: nothing is cached.
for (let i = -5; i < RUNS; i++) {
  const draft = `${DRAFT} (note ${i})`;
  const warm = i < 0; // the first runs load modules and open the store: not measured
  const sink = (k) => (warm ? [] : times[k]);
  const audited = await timed(sink("runAudit"), () => runAudit({ executor, challenger, prompt: PROMPT, ...quiet }));
  const lib = await timed(sink("library"), () => challenge({ challenger, prompt: PROMPT, draft, ...quiet }));
  const tool = await timed(sink("mcp"), () => client.callTool({ name: "challenge", arguments: { prompt: PROMPT, draft } }));
  verdicts.add(`${audited.audit_meta.audit_verdict}/${lib.verdict}/${tool.structuredContent?.verdict}`);
}
await client.close();
await d.close();
await double.close();
rmSync(home, { recursive: true, force: true });

const m = { runAudit: median(times.runAudit), library: median(times.library), mcp: median(times.mcp) };
const { results, rows, record } = recorder({}, { digits: 2 });
record("run_audit_ms", "runAudit (executor, challenger, revision), median", m.runAudit, "ms");
record("challenge_library_ms", "library challenge (challenger only), median", m.library, "ms");
record("challenge_mcp_ms", "MCP challenge tool, in-memory transport, median", m.mcp, "ms");
record("mcp_over_library_ms", "MCP tool-call overhead over the library's challenge", m.mcp - m.library, "ms");
record("mcp_over_run_audit", "MCP challenge time / runAudit time", m.mcp / m.runAudit, "x", "< 1", m.mcp < m.runAudit);
results.runs = RUNS;
results.verdicts = [...verdicts].join(", "); // a string: the file stays as Biome formats it
writeFileSync(new URL("./results.mcp.json", import.meta.url), `${JSON.stringify(results, null, 2)}\n`);
console.table(rows);
