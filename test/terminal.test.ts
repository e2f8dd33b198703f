import { describe, expect, it } from "vitest";
import { jsonLine, terminalSafe } from "../src/terminal.js";

describe('terminalSafe and jsonLine (docs/errors.md "Model text on a terminal")', () => {
  it("shows every control but newline and tab as \\xHH; a CRLF line end is kept, a bare CR is not; twice is once", () => {
    const raw = "a\u0000b\u001b[2Jc\u0007d\u007fe\u0085f\u009b1mg\r\nh\ri\tj\nk";
    const shown = terminalSafe(raw);
    expect(shown).toBe("a\\x00b\\x1b[2Jc\\x07d\\x7fe\\x85f\\x9b1mg\r\nh\\x0di\tj\nk");
    expect(terminalSafe(shown)).toBe(shown);
    expect(terminalSafe("Grüße, 日本語 ✓")).toBe("Grüße, 日本語 ✓");
  });

  it("jsonLine holds no raw control character and parses back to the text exactly", () => {
    const raw = { text: "x\u001b]52;c;AA==\u0007y\u007f\u0080\u009fz\r\n" };
    const line = jsonLine(raw);
    expect(line).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
    expect(line).toContain("\\u009f");
    expect(JSON.parse(line)).toEqual(raw);
  });
});
