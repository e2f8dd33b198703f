import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { installCommand, missingOptional, OPT_IN_PARTS } from "../src/opt-in.js";

// The one command each opt-in part names (ADR-024) depends on where dissent runs: beside a global
// install it must be global too, through npx it is another npx, in a project a plain npm install.
const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { devDependencies: Record<string, string> };
const ENGINE = `node-llama-cpp@${pkg.devDependencies["node-llama-cpp"]}`;

describe("the command that adds an opt-in part", () => {
  it("in a project: npm install into that project's folder (named, so it works from anywhere), at the version dissent is tested with", () => {
    const site = { root: "/home/me/app/node_modules/dissent", execPath: "/usr/bin/node", platform: "linux" as const };
    expect(installCommand(OPT_IN_PARTS.engine, site)).toBe(`npm install --prefix /home/me/app ${ENGINE}`);
    expect(installCommand(OPT_IN_PARTS.postgres, site)).toBe(
      `npm install --prefix /home/me/app pg@${pkg.devDependencies.pg} pg-boss@${pkg.devDependencies["pg-boss"]}`,
    );
    const pnpm = { ...site, root: "/home/me/my app/node_modules/.pnpm/dissent@0.1.0/node_modules/dissent" };
    expect(installCommand(OPT_IN_PARTS.engine, pnpm)).toBe(`npm install --prefix '/home/me/my app' ${ENGINE}`);
  });

  it("beside a global dissent (npm install -g, nvm's or the system's prefix, Windows): npm install -g", () => {
    expect(installCommand(OPT_IN_PARTS.engine, { root: "/usr/lib/node_modules/dissent", execPath: "/usr/bin/node", platform: "linux" })).toBe(
      `npm install -g ${ENGINE}`,
    );
    const nvm = "/home/me/.nvm/versions/node/v20.20.2";
    expect(installCommand(OPT_IN_PARTS.engine, { root: `${nvm}/lib/node_modules/dissent`, execPath: `${nvm}/bin/node`, platform: "linux" })).toBe(
      `npm install -g ${ENGINE}`,
    );
    expect(
      installCommand(OPT_IN_PARTS.engine, {
        root: "C:\\Program Files\\nodejs\\node_modules\\dissent",
        execPath: "C:\\Program Files\\nodejs\\node.exe",
        platform: "win32",
      }),
    ).toMatch(/^npm install -g node-llama-cpp@/);
  });

  it("through npx: npx with this dissent's own folder and the part, never the name dissent (which would come from the registry)", () => {
    const site = { root: "/home/me/.npm/_npx/4f2a9c/node_modules/dissent", execPath: "/usr/bin/node", platform: "linux" as const };
    expect(installCommand(OPT_IN_PARTS.engine, site)).toBe(`npx -p /home/me/.npm/_npx/4f2a9c/node_modules/dissent -p ${ENGINE} dissent …`);
    const spaced = { ...site, root: "/home/Jo Doe/.npm/_npx/4f2a9c/node_modules/dissent" };
    expect(installCommand(OPT_IN_PARTS.engine, spaced)).toBe(`npx -p '/home/Jo Doe/.npm/_npx/4f2a9c/node_modules/dissent' -p ${ENGINE} dissent …`);
  });

  it("a checkout (no node_modules above it): npm install into the checkout", () => {
    expect(installCommand(OPT_IN_PARTS.engine, { root: "/work/dissent", execPath: "/usr/bin/node", platform: "linux" })).toBe(
      `npm install --prefix /work/dissent ${ENGINE}`,
    );
  });
});

describe("a missing package, as Node reports it", () => {
  const notFound = (name: string) =>
    Object.assign(new Error(`Cannot find package '${name}' imported from /x/dist/cli/chunks/a.js`), { code: "ERR_MODULE_NOT_FOUND" });

  it("an opt-in part: a configuration error naming the package, the part and its one command", () => {
    const e = missingOptional(notFound("pg-boss"));
    expect(e?.name).toBe("ConfigError");
    expect(e?.message).toMatch(
      /^this needs pg-boss \(the PostgreSQL store and the factory's queue on it\), which a default install of dissent leaves out: run npm install --prefix \S+ pg@\S+ pg-boss@\S+ \(docs\/factory\.md#many-machines-postgresql\)$/,
    );
  });

  it("an optional dependency npm skipped: npm install it", () => {
    expect(missingOptional(notFound("hono"))?.message).toBe("this needs hono, an optional dependency of dissent that is not installed: run npm install hono");
  });

  it("anything else is not ours to explain", () => {
    expect(missingOptional(notFound("left-pad"))).toBeUndefined();
    expect(missingOptional(new Error("Cannot find package 'pg'"))).toBeUndefined(); // no code: not a resolution failure
  });
});
