import { describe, expect, it } from "vitest";
import { buildProgram, run } from "../../src/cli/main.js";
import type { Io } from "../../src/cli/io.js";

/**
 * Every command's --help shows what it is for by example (issue 31 item 10): an `Examples:` section
 * of sentences, each followed by a `$ dissent …` line of that very command, and descriptions in
 * words, not design-record citations ("ADR-008/009").
 */
function captureIo(): Io & { out: string[] } {
  const out: string[] = [];
  return {
    out,
    stdout: (s) => void out.push(s),
    stderr: (s) => void out.push(s),
    readStdin: async () => undefined,
    stdinIsTTY: true,
    stdoutIsTTY: false,
    stderrIsTTY: false,
    columns: 100,
    env: {},
    cwd: process.cwd(),
    signal: new AbortController().signal,
    redact: (t) => t,
  } as Io & { out: string[] };
}

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

describe("--help of every command (issue 31 item 10)", () => {
  const paths = commandPaths();

  it("has an Examples: section: each a sentence, then a command line running that command", async () => {
    expect(paths.length).toBeGreaterThan(25);
    for (const path of paths) {
      const io = captureIo();
      expect(await run([...path, "--help"], io)).toBe(0);
      const text = io.out.join("");
      const name = `dissent ${path.join(" ")}`.trim();
      const section = text.split(/^Examples:$/m)[1]?.split(/^Reference:/m)[0] ?? "";
      expect(section, `${name} --help has an Examples: section`).not.toBe("");
      const lines = section.split("\n").filter((l) => l.trim() !== "");
      expect(lines.length, name).toBeGreaterThanOrEqual(2);
      for (let i = 0; i < lines.length; i += 2) {
        const [what = "", example = ""] = [lines[i], lines[i + 1]];
        expect(what, `${name}: a sentence before each example`).toMatch(/^ {2}[A-Z].*[a-z)].*:$/);
        expect(example, `${name}: the example is a command line`).toMatch(/^ {4}\$ \S/);
      }
      // Each example runs the command whose help shows it (the root's and mcp's may show how to reach it from elsewhere).
      if (path.length > 0 && path[0] !== "mcp") {
        const own = lines.filter((l) => l.startsWith("    $ ")).some((l) => l.includes(`dissent ${path.join(" ")}`));
        expect(own, `${name}: an example of ${name} itself`).toBe(true);
      }
    }
  });

  it("says what a command does in words, not by citing design records", async () => {
    for (const path of paths) {
      const io = captureIo();
      await run([...path, "--help"], io);
      const text = io.out.join("").split(/^Reference:/m)[0] ?? "";
      expect(text, `dissent ${path.join(" ")} --help`).not.toMatch(/\bADR-?\d|ComplexityGate|ShippedWithKnownGap/);
    }
  });
});
