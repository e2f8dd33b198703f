/**
 * Issue 20, hostile files, through the built CLI: every file dissent reads goes through one bounded,
 * regular-file-checked reader (/dev/zero and FIFOs refused or skipped, never a hang or a 3 GB read),
 * and no write ever follows a symbolic link planted at its path.
 */
import { spawnSync } from "node:child_process";
import { existsSync, linkSync, lstatSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { CliResult } from "../support/cli.js";
import { errorLine } from "../support/e2e.js";
import { holdWorld, linesOf, type HoldWorld } from "../support/hold.js";
import { writeTinyGguf } from "../support/tiny-gguf.js";

vi.setConfig({ testTimeout: 90_000 });

let w: HoldWorld | undefined;
afterEach(async () => {
  await w?.close();
  w = undefined;
});

/** A FIFO nobody writes to: opening it for reading the ordinary way waits forever. */
function fifo(path: string): string {
  const r = spawnSync("mkfifo", [path]);
  if (r.status !== 0) throw new Error(`mkfifo failed: ${r.stderr.toString()}`);
  return path;
}

/** One error line naming what is at fault, with the exit code given; never an internal error. */
function refused(r: CliResult, code: number, ...names: string[]): string {
  expect(r.code, `${r.stderr}\n(signal ${r.signal})`).toBe(code);
  const line = errorLine(r);
  expect(line).not.toMatch(/internal error/i);
  for (const n of names) expect(line).toContain(n);
  return line;
}

/** A wiki entry file as `issue merged` writes it. */
const ENTRY = (title: string) =>
  [
    "---",
    `title: ${title}`,
    "confidence: low",
    "stale: false",
    "pr: 7",
    'issue: "1"',
    "source: shipped-with-known-gap",
    "fingerprint: 0123456789abcdef",
    "severity: HIGH",
    "---",
    `# ${title}`,
    "",
    "A gap.",
    "",
  ].join("\n");

// The old reader took 3 GB from /dev/zero in 8 s and waited on a FIFO forever: a 20 s kill is the failure.
const QUICK = { timeoutMs: 20_000 };

describe("eval reads sets and reports bounded, regular files only", () => {
  it("eval gate|pipeline --set /dev/zero and eval compare /dev/zero /dev/zero: one line, exit 2, at once", async () => {
    w = await holdWorld();
    for (const cmd of ["gate", "pipeline"]) {
      const r = await w.run(["eval", cmd, "--set", "/dev/zero"], QUICK);
      expect(refused(r, 2, "/dev/zero")).toMatch(/not a regular file/);
    }
    const c = await w.run(["eval", "compare", "/dev/zero", "/dev/zero"], QUICK);
    expect(refused(c, 2, "/dev/zero")).toMatch(/not a regular file/);
    expect(w.server.requests).toHaveLength(0);
  });

  it("eval gate --set FIFO: refused, not waited on", async () => {
    w = await holdWorld();
    fifo(join(w.dir, "set.yaml"));
    const r = await w.run(["eval", "gate", "--set", "set.yaml"], QUICK);
    expect(refused(r, 2, "set.yaml")).toMatch(/FIFO/);
  });

  it("a set larger than 32 MiB is refused by its size, without reading it", async () => {
    w = await holdWorld();
    const big = join(w.dir, "big.json");
    writeFileSync(big, "");
    spawnSync("truncate", ["-s", "40M", big]);
    const r = await w.run(["eval", "gate", "--set", "big.json"], QUICK);
    expect(refused(r, 2, "big.json")).toMatch(/32 MiB/);
  });
});

describe("config, policy and body files that are FIFOs", () => {
  it("--config FIFO, a policy FIFO, --body-file FIFO: each one line, exit 2, naming it", async () => {
    w = await holdWorld();
    fifo(join(w.dir, "pipe.yaml"));
    const config = await w.run(["run", "--config", "pipe.yaml", "hi"], QUICK);
    expect(refused(config, 2, "pipe.yaml")).toMatch(/FIFO/);
    fifo(join(w.dir, "policy.md"));
    const policy = await w.run(["run", "--audit", "--policy", "./policy.md", "hi"], QUICK);
    expect(refused(policy, 2, "policy.md")).toMatch(/FIFO/);
    fifo(join(w.dir, "body.txt"));
    const body = await w.run(["issue", "new", "--title", "A title", "--body-file", "body.txt"], QUICK);
    expect(refused(body, 2, "body.txt")).toMatch(/FIFO/);
    expect(w.server.requests).toHaveLength(0);
  });
});

describe("the wiki: a FIFO is skipped on import; export never writes through a link", () => {
  it("wiki import DIR with a FIFO among the entries imports the others and warns about the FIFO", async () => {
    w = await holdWorld();
    const dir = join(w.dir, "entries");
    mkdirSync(dir);
    writeFileSync(join(dir, "a-gap-0123456789abcdef.md"), ENTRY("A gap"));
    fifo(join(dir, "b-pipe.md"));
    const r = await w.run(["wiki", "import", "entries", "--json"], QUICK);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ imported: ["a-gap-0123456789abcdef"] });
    const warnings = linesOf(r.stderr);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^dissent: warning: skipping .*b-pipe\.md: is a FIFO/);
  });

  it("wiki export DIR refuses a symbolic link planted at DIR/<id>.md and leaves the file it points to untouched", async () => {
    w = await holdWorld();
    mkdirSync(join(w.home, "wiki"), { recursive: true });
    writeFileSync(join(w.home, "wiki", "a-gap-0123456789abcdef.md"), ENTRY("A gap"));
    const victim = join(w.dir, "victim.txt");
    writeFileSync(victim, "precious\n");
    mkdirSync(join(w.dir, "out"));
    symlinkSync(victim, join(w.dir, "out", "a-gap-0123456789abcdef.md"));
    const r = await w.run(["wiki", "export", "out"], QUICK);
    expect(refused(r, 2, "a-gap-0123456789abcdef.md")).toMatch(/symbolic link/);
    expect(readFileSync(victim, "utf8")).toBe("precious\n");

    // Without the link, the same export writes the entry.
    const ok = await w.run(["wiki", "export", "out2"], QUICK);
    expect(ok.code, ok.stderr).toBe(0);
    expect(readFileSync(join(w.dir, "out2", "a-gap-0123456789abcdef.md"), "utf8")).toBe(ENTRY("A gap"));
  });

  it("wiki export DIR refuses a hard link at DIR/<id>.md and leaves the other name of the file untouched (issue 32)", async () => {
    w = await holdWorld();
    mkdirSync(join(w.home, "wiki"), { recursive: true });
    writeFileSync(join(w.home, "wiki", "a-gap-0123456789abcdef.md"), ENTRY("A gap"));
    const victim = join(w.dir, "victim.txt");
    writeFileSync(victim, "precious\n");
    mkdirSync(join(w.dir, "out"));
    linkSync(victim, join(w.dir, "out", "a-gap-0123456789abcdef.md"));
    const r = await w.run(["wiki", "export", "out"], QUICK);
    expect(refused(r, 2, "a-gap-0123456789abcdef.md")).toMatch(/has 1 other hard link: dissent never writes through a hard link/);
    expect(readFileSync(victim, "utf8")).toBe("precious\n");
  });

  it.each([
    ["DIR itself is a link to a folder", "out", (dir: string) => symlinkSync(join(dir, "elsewhere"), join(dir, "out")), "out is a symbolic link"],
    ["DIR is a dangling link", "out", (dir: string) => symlinkSync(join(dir, "elsewhere"), join(dir, "out")), "out is a symbolic link"],
    [
      "a folder on the way to DIR is a link",
      "docs/wiki/gaps",
      (dir: string) => {
        mkdirSync(join(dir, "docs"));
        symlinkSync(join(dir, "elsewhere"), join(dir, "docs", "wiki"));
      },
      "docs/wiki is a symbolic link",
    ],
  ])("wiki export DIR refuses when %s, and writes nothing where the link points (issue 32)", async (name, dir, plant, said) => {
    w = await holdWorld();
    mkdirSync(join(w.home, "wiki"), { recursive: true });
    writeFileSync(join(w.home, "wiki", "a-gap-0123456789abcdef.md"), ENTRY("A gap"));
    if (!name.includes("dangling")) mkdirSync(join(w.dir, "elsewhere"));
    plant(w.dir);
    const r = await w.run(["wiki", "export", dir], QUICK);
    expect(refused(r, 2, said)).toMatch(/dissent never writes through a link/);
    expect(existsSync(join(w.dir, "elsewhere")) ? readdirSync(join(w.dir, "elsewhere")) : []).toEqual([]);

    // A DIR whose folders are real, created as needed, is written.
    const ok = await w.run(["wiki", "export", "new/deep/out"], QUICK);
    expect(ok.code, ok.stderr).toBe(0);
    expect(readFileSync(join(w.dir, "new", "deep", "out", "a-gap-0123456789abcdef.md"), "utf8")).toBe(ENTRY("A gap"));
  });
});

describe("init and the local engine: paths that cannot be used are usage or configuration errors", () => {
  it("init --config nodir/x.yaml: a usage error naming the path (exit 2), not an internal ENOENT", async () => {
    w = await holdWorld();
    const r = await w.run(["init", "--config", "nodir/x.yaml"], { env: { DISSENT_OLLAMA_URL: "http://127.0.0.1:9" }, ...QUICK });
    expect(refused(r, 2, "nodir/x.yaml")).toMatch(/does not exist/);
  });

  it("init --config on a dangling symbolic link refuses and never creates the link's target", async () => {
    w = await holdWorld();
    const target = join(w.dir, "elsewhere.yaml");
    symlinkSync(target, join(w.dir, "dangling.yaml"));
    const r = await w.run(["init", "--config", "dangling.yaml"], { env: { DISSENT_OLLAMA_URL: "http://127.0.0.1:9" }, ...QUICK });
    expect(refused(r, 2, "dangling.yaml")).toMatch(/symbolic link/);
    expect(existsSync(target)).toBe(false);
    expect(lstatSync(join(w.dir, "dangling.yaml")).isSymbolicLink()).toBe(true);
  });

  const llamaConfig = (model: string) =>
    ["providers:", `  tiny: { type: llama-cpp, model: ${JSON.stringify(model)} }`, "routes:", '  default: { primary: "tiny:x" }', ""].join("\n");

  it("a llama-cpp model: that is a folder is the configuration error (exit 2), not an internal EISDIR", async () => {
    w = await holdWorld();
    mkdirSync(join(w.dir, "models.gguf"));
    w.write("dissent.config.yaml", llamaConfig("./models.gguf"));
    const r = await w.run(["run", "hi"], QUICK);
    expect(refused(r, 2, "models.gguf")).toMatch(/is a folder/);
  });

  it("a GGUF whose tensor and key counts are 2^64-1 (24 bytes) fails at once as corrupt, before the engine reads it", async () => {
    w = await holdWorld();
    const header = Buffer.alloc(24);
    header.write("GGUF", 0, "latin1");
    header.writeUInt32LE(3, 4);
    header.writeBigUInt64LE(2n ** 64n - 1n, 8);
    header.writeBigUInt64LE(2n ** 64n - 1n, 16);
    writeFileSync(join(w.dir, "hostile.gguf"), header);
    w.write("dissent.config.yaml", llamaConfig("./hostile.gguf"));
    const r = await w.run(["run", "hi"], QUICK);
    expect(refused(r, 2, "hostile.gguf")).toMatch(/corrupt/);
    // doctor says the same in its row, at once.
    const d = await w.run(["doctor", "--json"], QUICK);
    expect(d.code, d.stderr).toBe(1);
    const rows = (JSON.parse(d.stdout) as { routes: { ok: boolean; detail: string }[] }).routes;
    expect(rows.map((x) => [x.ok, /corrupt/.test(x.detail)])).toEqual([[false, true]]);
  });

  it("a real tiny GGUF passes the header check: its counts fit its size", async () => {
    w = await holdWorld();
    writeTinyGguf(join(w.dir, "tiny.gguf"));
    w.write("dissent.config.yaml", llamaConfig("./tiny.gguf"));
    const d = await w.run(["doctor", "--json"], { timeoutMs: 60_000 });
    const rows = (JSON.parse(d.stdout) as { routes: { ok: boolean; detail: string }[] }).routes;
    expect(rows[0]?.detail).toContain("model file present");
    expect(rows[0]?.detail).not.toMatch(/corrupt/);
  });
});
