/**
 * The page's code (src/web, browser settings: DOM, JSX) is type-checked like the rest: the main
 * tsconfig excludes it, so this runs `tsc -p tsconfig.web.json`.
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

describe("src/web", () => {
  it("type-checks under tsconfig.web.json", () => {
    const root = fileURLToPath(new URL("../../", import.meta.url));
    const tsc = fileURLToPath(new URL("../../node_modules/typescript/bin/tsc", import.meta.url));
    const r = spawnSync(process.execPath, [tsc, "-p", "tsconfig.web.json"], { cwd: root, encoding: "utf8", timeout: 120_000 });
    expect(r.stdout + r.stderr).toBe("");
    expect(r.status).toBe(0);
  }, 120_000);
});
