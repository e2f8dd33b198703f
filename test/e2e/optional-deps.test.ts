/**
 * A default install leaves out PostgreSQL (pg, pg-boss), telemetry (the OpenTelemetry SDK) and the
 * local engine (ADR-024); `npm install --omit=optional` also leaves out `serve` (Hono), and SQLite
 * where it cannot build. The CLI then still runs what needs none of them, and a command that needs one
 * fails with one line naming the package and how to install it — never an internal error. The
 * packages are hidden from a spawned CLI by a module hook that answers as Node does for a package
 * that is not installed.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { audit, byRole, errorLine, world, type World } from "../support/e2e.js";
import { hidingPackages as hiding } from "../support/hide-packages.js";

let w: World | undefined;
afterEach(async () => {
  await w?.close();
  w = undefined;
});

const OPTIONAL_BUT_SQLITE = [
  "pg",
  "pg-boss",
  "hono",
  "@hono/node-server",
  "@opentelemetry/sdk-trace-base",
  "@opentelemetry/exporter-trace-otlp-http",
  "@opentelemetry/resources",
  "node-llama-cpp",
];

describe("without the optional dependencies", () => {
  it("run --audit and the pipeline still work", async () => {
    w = await world(byRole({ executor: { content: "Water boils at 100 °C at sea level." }, challenger: { content: audit("pass") } }));
    const env = { NODE_OPTIONS: hiding(w.dir, OPTIONAL_BUT_SQLITE) };
    const r = await w.run(["run", "--audit", "When does water boil?"], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("100 °C");
    const created = await w.run(["issue", "new", "--title", "Retry 503s", "--json"], { env });
    expect(created.code, created.stderr).toBe(0);
  });

  it.each([
    ["serve without Hono", ["serve", "--port", "0"], "", /npm install (hono|@hono\/node-server)$/],
    // An opt-in part (ADR-024): the one command names both packages at the versions dissent is tested with.
    [
      "a PostgreSQL store without pg",
      ["issue", "list"],
      "store: { type: postgres }\n",
      /: run npm install --prefix \S+ pg@\d+\.\d+\.\d+ pg-boss@\d+\.\d+\.\d+ \(docs\/factory\.md#many-machines-postgresql\)$/,
    ],
  ] as const)("%s: exit 2, one line naming the package and how to install it", async (_name, args, extra, pkg) => {
    w = await world(byRole({}));
    const config = join(w.dir, "dissent.config.yaml");
    writeFileSync(config, `${readFileSync(config, "utf8")}${extra}`);
    const r = await w.run([...args], { env: { NODE_OPTIONS: hiding(w.dir, OPTIONAL_BUT_SQLITE), DISSENT_DATABASE_URL: "postgres://127.0.0.1:1/none" } });
    expect(r.code, r.stderr).toBe(2);
    const line = errorLine(r);
    expect(line).not.toMatch(/internal error/);
    expect(line).toMatch(pkg);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
  });

  it("telemetry without the OpenTelemetry SDK costs one warning, never the run", async () => {
    w = await world(byRole({ executor: { content: "Water boils at 100 °C at sea level." }, challenger: { content: audit("pass") } }));
    const r = await w.run(["run", "--audit", "When does water boil?"], {
      env: { NODE_OPTIONS: hiding(w.dir, OPTIONAL_BUT_SQLITE), OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:1" },
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("100 °C");
    const warnings = r.stderr.split("\n").filter((l) => /telemetry/.test(l));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(
      /run npm install --prefix \S+ @opentelemetry\/sdk-trace-base@\S+ @opentelemetry\/exporter-trace-otlp-http@\S+ @opentelemetry\/resources@\S+ \(docs\/serve\.md#traces-opentelemetry\)$/,
    );
  });
});
