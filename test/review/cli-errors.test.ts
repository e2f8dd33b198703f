import { afterEach, describe, expect, it } from "vitest";
import { byRole, errorLine, world, type World } from "../support/e2e.js";

/**
 * docs/errors.md: "An error is one line on stderr, `dissent: error: …`, naming the file,
 * flag or provider at fault". A user's typo of a real flag or command is the commonest
 * usage error there is.
 */
let w: World | undefined;
afterEach(async () => {
  await w?.close();
  w = undefined;
});

describe("usage errors are one line on stderr (exit 2)", () => {
  it("a misspelt flag (close to a real one): one error line, exit 2, no request", async () => {
    w = await world(byRole({ executor: { content: "Forty-two." } }));
    const r = await w.run(["run", "--jsn", "hello"]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    // Today stderr is "dissent: error: unknown option '--jsn'\n(Did you mean --json?)\n": two lines.
    expect(errorLine(r)).toContain("--jsn");
    expect(w.server.requests).toHaveLength(0);
  });

  it("a misspelt command (close to a real one): one error line, exit 2", async () => {
    w = await world(byRole({ executor: { content: "Forty-two." } }));
    const r = await w.run(["rn", "hello"]);
    expect(r.code).toBe(2);
    expect(errorLine(r)).toContain("rn");
    expect(w.server.requests).toHaveLength(0);
  });
});
