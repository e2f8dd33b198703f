/**
 * The zod schemas the package entry exports are ordinary zod schemas (issue 31 item 9; docs/library.md
 * "Exported schemas"): what a library user does with them — parse, safeParse and its issues,
 * z.toJSONSchema, `.shape`, `.extend`, `.pick`, `instanceof z.ZodObject`, embedding in a schema of
 * their own, and the TypeScript types z.infer and z.input give.
 *
 * test/fixtures/public-schemas/expected.json was recorded (record.mjs) from the built package when
 * every schema was built at import (before issue 21's lazy wrappers, which issue 31 removed again).
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
  it("parse, reject with the same issues and convert to the same JSON Schema as the recording", () => {
    const r = node([fileURLToPath(new URL("record.mjs", FIXTURES))]);
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    const now = JSON.parse(r.stdout) as Record<string, unknown>;
    const before = JSON.parse(readFileSync(new URL("expected.json", FIXTURES), "utf8")) as Record<string, unknown>;
    expect(Object.keys(now)).toHaveLength(15);
    for (const name of Object.keys(before)) expect({ name, ...(now[name] as object) }).toEqual({ name, ...(before[name] as object) });
  });

  it("are ordinary zod schemas: instanceof z.ZodObject, .shape, .extend and .pick work on every one, and they embed in a user's schema", () => {
    const r = node([
      "--input-type=module",
      "-e",
      `
      import * as dissent from "dissent";
      import { z } from "zod";
      const { AuditMeta, CallRecord, ConfigFile, DissentEvent, FindingsReply } = dissent;
      const objects = {};
      for (const [name, s] of Object.entries(dissent)) {
        if (!(s instanceof z.ZodType)) continue;
        if (!(s instanceof z.ZodObject)) { objects[name] = s.constructor.name; continue; }
        const keys = Object.keys(s.shape);
        const extended = s.extend({ mine: z.literal("x") });
        objects[name] = {
          keys: keys.length,
          picked: Object.keys(s.pick({ [keys[0]]: true }).shape),
          first: keys[0],
          extended: Object.keys(extended.shape).at(-1),
          extendedIsObject: extended instanceof z.ZodObject,
        };
      }
      const Mine = z.object({ meta: AuditMeta, calls: z.array(CallRecord).optional(), events: z.array(DissentEvent) });
      const good = Mine.safeParse({
        meta: { audit_used: false, audit_verdict: null, revised: false, audit_passes: 0, revision_passes: 0, challenger_status: "skipped", concerns: 0, ungrounded_concerns: 0, invalid_concerns: 0 },
        events: [{ type: "LabelChanged", at: "t", issue_id: null, added: [], removed: [], labels: [] }],
      });
      const bad = Mine.safeParse({ meta: { audit_used: 1 }, events: [{ type: "Nope" }] });
      // What issue 31 saw throw: a library user's FindingsReply.extend({...}).
      const WithNote = FindingsReply.extend({ note: z.string() });
      console.log(JSON.stringify({
        objects,
        good: good.success,
        bad: bad.error.issues.map((i) => i.path.join(".")),
        shape: Object.keys(ConfigFile.shape).slice(0, 3),
        extended: ConfigFile.extend({ mine: z.string() }).safeParse({ mine: "x", seed: 1 }).success,
        withNote: [WithNote.safeParse({ findings: [], note: "n" }).success, WithNote.safeParse({ findings: [] }).success],
        events: DissentEvent.options.length > 10 && DissentEvent.options.every((o) => o instanceof z.ZodObject && "type" in o.shape),
      }));
      `,
    ]);
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout);
    const objectNames = [
      "AuditConcern",
      "AuditInput",
      "AuditMeta",
      "AuditReply",
      "CallRecord",
      "Concern",
      "ConcernResolution",
      "ConfigFile",
      "Finding",
      "FindingsReply",
      "RunOutput",
      "ShownConcern",
      "StageRun",
      "VerifierReply",
    ];
    // Every exported schema but the event union is a z.ZodObject whose shape, pick and extend work; the union's options are objects.
    expect(Object.keys(out.objects).sort()).toEqual([...objectNames, "DissentEvent"].sort());
    expect(out.objects.DissentEvent).toBe("ZodDiscriminatedUnion");
    for (const name of objectNames) {
      expect(out.objects[name].keys, name).toBeGreaterThan(0);
      expect(out.objects[name], name).toMatchObject({ picked: [out.objects[name].first], extended: "mine", extendedIsObject: true });
    }
    expect(out).toMatchObject({
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
      extended: true,
      withNote: [true, false],
      events: true,
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
