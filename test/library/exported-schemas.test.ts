/**
 * Issue 21 item 5: the zod schemas the package entry exports that runAudit does not parse are built on
 * their first use, not at import (docs/library.md "Exported schemas"). What a library user does with
 * them must not change: parse, safeParse and its issues, z.toJSONSchema (input and output), embedding
 * in a schema of their own, and the TypeScript types z.infer and z.input give.
 *
 * test/fixtures/public-schemas/expected.json was recorded (record.mjs) from the built package before
 * the change, when every schema was built at import.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, expectTypeOf, it } from "vitest";
import type { z } from "zod";
import type { AuditMeta, CallRecord, ConfigFile, DissentEvent, Finding, NewEvent, ShownConcern, StageRun } from "../../src/index.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const FIXTURES = new URL("../fixtures/public-schemas/", import.meta.url);

/** Runs a module or an ESM snippet with node from the package root, so `import "dissent"` is the built package. */
function node(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, args, { cwd: ROOT, encoding: "utf8", env: { PATH: process.env.PATH ?? "" } });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('the schemas exported by "dissent" (docs/library.md "Exported schemas")', () => {
  it("parse, reject with the same issues and convert to the same JSON Schema as when they were built at import", () => {
    const r = node([fileURLToPath(new URL("record.mjs", FIXTURES))]);
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    const now = JSON.parse(r.stdout) as Record<string, unknown>;
    const before = JSON.parse(readFileSync(new URL("expected.json", FIXTURES), "utf8")) as Record<string, unknown>;
    expect(Object.keys(now)).toHaveLength(15);
    for (const name of Object.keys(before)) expect({ name, ...(now[name] as object) }).toEqual({ name, ...(before[name] as object) });
  });

  it("embed in a user's own schema, and unwrap() gives the object schema with its shape", () => {
    const r = node([
      "--input-type=module",
      "-e",
      `
      import { AuditMeta, CallRecord, ConfigFile, DissentEvent } from "dissent";
      import { z } from "zod";
      const Mine = z.object({ meta: AuditMeta, calls: z.array(CallRecord).optional(), events: z.array(DissentEvent) });
      const good = Mine.safeParse({
        meta: { audit_used: false, audit_verdict: null, revised: false, audit_passes: 0, revision_passes: 0, challenger_status: "skipped", concerns: 0, ungrounded_concerns: 0, invalid_concerns: 0 },
        events: [{ type: "LabelChanged", at: "t", issue_id: null, added: [], removed: [], labels: [] }],
      });
      const bad = Mine.safeParse({ meta: { audit_used: 1 }, events: [{ type: "Nope" }] });
      const Extended = ConfigFile.unwrap().extend({ mine: z.string() });
      console.log(JSON.stringify({
        good: good.success,
        bad: bad.error.issues.map((i) => i.path.join(".")),
        shape: Object.keys(ConfigFile.unwrap().shape).slice(0, 3),
        same: ConfigFile.unwrap() === ConfigFile.unwrap(),
        extended: Extended.safeParse({ mine: "x", seed: 1 }).success,
      }));
      `,
    ]);
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      good: true,
      bad: [
        "meta.audit_used",
        "meta.audit_verdict",
        "meta.revised",
        "meta.audit_passes",
        "meta.revision_passes",
        "meta.challenger_status",
        "meta.concerns",
        "meta.ungrounded_concerns",
        "meta.invalid_concerns",
        "events.0.type",
      ],
      shape: ["home", "providers", "routes"],
      same: true,
      extended: true,
    });
  });

  it("give the same TypeScript types through z.infer and z.input (checked by tsc)", () => {
    expectTypeOf<z.infer<typeof ShownConcern>>().toEqualTypeOf<{ category: string; severity: string; evidence: string; concern: string }>();
    expectTypeOf<z.infer<typeof AuditMeta>["revision_drift"]>().toEqualTypeOf<{ kind: "url" | "date" | "number" | "name"; text: string }[] | undefined>();
    expectTypeOf<z.infer<typeof CallRecord>["cost_usd"]>().toEqualTypeOf<number | null | undefined>();
    expectTypeOf<z.infer<typeof ConfigFile>["seed"]>().toEqualTypeOf<number | undefined>();
    expectTypeOf<NonNullable<z.infer<typeof ConfigFile>["tracker"]>["type"]>().toEqualTypeOf<"local" | "github">();
    expectTypeOf<z.input<typeof Finding>["human_required"]>().toEqualTypeOf<unknown>();
    expectTypeOf<z.infer<typeof Finding>["human_required"]>().toEqualTypeOf<boolean | undefined>();
    expectTypeOf<z.infer<typeof StageRun>["cost_usd"]>().toEqualTypeOf<number | null>();
    expectTypeOf<Extract<z.infer<typeof DissentEvent>, { type: "LabelChanged" }>["labels"]>().toEqualTypeOf<string[]>();
    expectTypeOf<Extract<NewEvent, { type: "ModelCall" }>["request_hash"]>().toEqualTypeOf<string>();
  });
});
