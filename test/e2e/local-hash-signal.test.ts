/**
 * Issue 32: a multi-GB model file is hashed once, to key the reply cache by its content — as a
 * stream the signal stops, never on the main thread. A SIGTERM while `dissent doctor` or
 * `dissent run --replay` hashes it ends the process as terminated (143), and the hash is never
 * finished (nothing remembered in the sidecar). The model is a tiny GGUF made sparse to 8 GiB:
 * reading it whole takes seconds, storing it takes nothing.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { scratch } from "../support/cli.js";
import { startDissent, stopAll, until, type Started } from "../support/proc.js";
import { writeBigGguf } from "../support/tiny-gguf.js";

let s: ReturnType<typeof scratch>;
const started: Started[] = [];
beforeAll(() => {
  s = scratch("dissent-hash-signal-");
  s.write("big.yaml", writeBigGguf(s.dir).config);
});
afterEach(() => stopAll(started));
afterAll(() => s.cleanup());

/** Starts the command, waits until it says it is hashing the model, then sends one SIGTERM. */
async function termWhileHashing(args: string[]) {
  const x = startDissent([...args, "--config", "big.yaml"], { cwd: s.dir, env: { DISSENT_HOME: join(s.dir, "home") } });
  started.push(x);
  let stderr = "";
  x.child.stderr?.on("data", (d: Buffer) => (stderr += d.toString("utf8")));
  await until(() => stderr.includes("dissent: hashing ") || x.child.exitCode !== null, 60_000);
  expect(stderr).toContain(`dissent: hashing ${join(s.dir, "big.gguf")} (8.6 GB) once`);
  x.child.kill("SIGTERM");
  return x.done;
}

/** The last line on stderr, after checking every line is dissent's own. */
const lastLine = (stderr: string): string => {
  const lines = stderr.split("\n").filter((l) => l !== "");
  for (const l of lines) expect(l).toMatch(/^dissent: /);
  return lines.at(-1) ?? "";
};

/** The sidecar's hashes by real path (none when it was never written). */
const remembered = (): Record<string, unknown> => {
  const file = join(s.dir, "models", ".dissent-sha256.json");
  return existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>) : {};
};

describe("SIGTERM while a large model file is hashed", () => {
  it("dissent doctor stops: exit 143, one error line, the hash never finished", async () => {
    const r = await termWhileHashing(["doctor"]);
    expect(r.code).toBe(143);
    expect(lastLine(r.stderr)).toBe("dissent: error: terminated (SIGTERM)");
    expect(r.stdout).toBe(""); // no table of checks it never finished
    expect(remembered()).not.toHaveProperty(join(s.dir, "big.gguf"));
  }, 90_000);

  it("dissent run --replay stops: exit 143, not 1", async () => {
    const r = await termWhileHashing(["run", "--replay", "--audit", "What is 2+2?"]);
    expect(r.code).toBe(143);
    expect(lastLine(r.stderr)).toBe("dissent: error: terminated (SIGTERM)");
    expect(remembered()).not.toHaveProperty(join(s.dir, "big.gguf"));
  }, 90_000);
});
