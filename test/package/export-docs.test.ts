import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const ENTRIES = { ".": "dist/index.d.ts", "./ai-sdk": "dist/ai-sdk/index.d.ts", "./testing": "dist/testing/index.d.ts" };

let program: ts.Program | undefined;

/** Every name an entry point exports, with its doc comment as the built .d.ts carries it (one program for all three). */
function exportsOf(file: string): { name: string; doc: string }[] {
  program ??= ts.createProgram(
    Object.values(ENTRIES).map((f) => `${ROOT}${f}`),
    { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, skipLibCheck: true, noEmit: true },
  );
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(file);
  if (!source) throw new Error(`no ${file}`);
  const moduleSymbol = checker.getSymbolAtLocation(source);
  if (!moduleSymbol) throw new Error(`${file} is not a module`);
  return checker.getExportsOfModule(moduleSymbol).map((s) => {
    const target = s.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(s) : s;
    return { name: s.getName(), doc: ts.displayPartsToString(target.getDocumentationComment(checker)).trim() };
  });
}

describe("the curated package surface (ADR-014)", () => {
  for (const [entry, dts] of Object.entries(ENTRIES)) {
    it(`every export of "dissent${entry === "." ? "" : entry.slice(1)}" has a doc comment`, () => {
      const file = `${ROOT}${dts}`;
      expect(existsSync(file), `${dts} is built (npm run build)`).toBe(true);
      const names = exportsOf(file);
      expect(names.length).toBeGreaterThan(0);
      expect(names.filter((n) => n.doc === "").map((n) => n.name)).toEqual([]);
    });
  }

  it("the package entry exports what docs/library.md and §10 name, and no internals", () => {
    const names = exportsOf(`${ROOT}dist/index.d.ts`).map((n) => n.name);
    for (const n of [
      "runAudit",
      "challenge",
      "createDissent",
      "AdversarialRetryLoop",
      "fingerprint",
      "AuditReply",
      "AuditMeta",
      "RunOutput",
      "Concern",
      "ProviderError",
      "BudgetExceeded",
      "Verifier",
      "VerifierReply",
      "severityText",
    ]) {
      expect(names).toContain(n);
    }
    for (const n of ["callModel", "auditGate", "planIssue", "fixedRouter", "groundConcerns", "parseStructured", "PassLimits", "reduceState"])
      expect(names).not.toContain(n);
    // r3 adds three: the Verifier of a second opinion, its reply's schema, and severityText for showing a concern.
    expect(names.length).toBeLessThan(79);
  });
});
