import { describe, expect, expectTypeOf, it } from "vitest";
import {
  AgentEscaped,
  AuditLimitExceeded,
  BudgetExceeded,
  codeOf,
  ConfigError,
  DissentError,
  GitError,
  Interrupted,
  isFatal,
  LeaseHeld,
  ProviderAuthError,
  ProviderError,
  ReplayMiss,
  ReplyFormatError,
  RunError,
  StoreError,
  TrackerAuthError,
  UsageError,
} from "../src/errors.js";
import type { FailureKind } from "../src/models/transport.js";

// Errors as the AI SDK shapes them (docs/errors.md): a marker per class, inherited by subclasses;
// read-only data from the constructor; `fatal` on the error itself.

const failure = { provider: "p", model: "m", kind: "server" as const, attempts: 3 };
const all = () => [
  new UsageError("u"),
  new ConfigError("c"),
  new AuditLimitExceeded("a"),
  new ReplayMiss("r"),
  new ReplyFormatError("f"),
  new StoreError("s"),
  new RunError("run"),
  new TrackerAuthError("t"),
  new Interrupted("i", { signal: "SIGTERM" }),
  new LeaseHeld("l", { holder: { host: "h", pid: 1, since: "now" } }),
  new BudgetExceeded("b", { max: 30, used: 30 }),
  new ProviderError("p", failure),
  new ProviderAuthError("pa", { ...failure, kind: "auth" }),
];

describe("errors you can branch on", () => {
  it("each class recognises itself and its subclasses, never a sibling or a parent", () => {
    expect(RunError.isInstance(new TrackerAuthError("t"))).toBe(true);
    expect(TrackerAuthError.isInstance(new RunError("r"))).toBe(false);
    expect(ProviderError.isInstance(new ProviderAuthError("a"))).toBe(true);
    expect(ProviderAuthError.isInstance(new ProviderError("p"))).toBe(false);
    expect(UsageError.isInstance(new ConfigError("c"))).toBe(false);
    for (const e of all()) expect(DissentError.isInstance(e)).toBe(true);
    expect(DissentError.isInstance(new Error("plain"))).toBe(false);
    expect(RunError.isInstance({ name: "RunError", message: "a look-alike" })).toBe(false);
  });

  it("a parent never names its children: a subclass of RunError that dissent never heard of is a RunError", () => {
    class QuotaRunError extends RunError {
      constructor() {
        super("out of quota", { name: "QuotaRunError" });
      }
    }
    const e = new QuotaRunError();
    expect(RunError.isInstance(e)).toBe(true);
    expect(TrackerAuthError.isInstance(e)).toBe(false);
    expect(e.name).toBe("QuotaRunError");
  });

  it("isInstance works across two copies of the module (the built package and the source)", async () => {
    const built = (await import("../dist/errors.js")) as typeof import("../src/errors.js");
    expect(RunError.isInstance(new built.TrackerAuthError("t"))).toBe(true);
    expect(built.ProviderError.isInstance(new ProviderAuthError("a"))).toBe(true);
    expect(built.isFatal(new ConfigError("c"))).toBe(true);
  });

  it("'ends the run' is a property of the error, and isFatal reads it", () => {
    const fatal = all()
      .filter((e) => e.fatal)
      .map((e) => e.name);
    expect(fatal).toEqual([
      "UsageError",
      "ConfigError",
      "AuditLimitExceeded",
      "ReplayMiss",
      "StoreError",
      "TrackerAuthError",
      "Interrupted",
      "LeaseHeld",
      "ProviderAuthError",
    ]);
    for (const e of all()) expect(isFatal(e)).toBe(e.fatal);
    expect(isFatal(new Error("x"))).toBe(false);
  });

  it("a provider failure's data is read-only, given to the constructor, its kind a FailureKind", () => {
    const e = new ProviderError("down", { ...failure, calls: [{ role: "executor" }] });
    expect(e).toMatchObject({ provider: "p", model: "m", kind: "server", attempts: 3, calls: [{ role: "executor" }] });
    expectTypeOf(e.kind).toEqualTypeOf<FailureKind>();
    expectTypeOf(e.calls).toEqualTypeOf<readonly unknown[]>();
    // @ts-expect-error calls is read-only
    e.calls = [];
  });

  it("every error is built from its message and one options object: data by name, a cause kept, defaults where data is left out", () => {
    const cause = new Error("disk full");
    expect(new BudgetExceeded("b", { max: 3, used: 3, unit: "attempts", setting: "implement.max_attempts_per_issue" })).toMatchObject({
      max: 3,
      used: 3,
      unit: "attempts",
      setting: "implement.max_attempts_per_issue",
    });
    expect(new BudgetExceeded("b", { max: 30, used: 30 }).unit).toBe("calls");
    expect(new Interrupted("i").signal).toBe("SIGINT");
    expect(new Interrupted("i", { signal: "SIGTERM", cause }).cause).toBe(cause);
    expect(new RunError("r", { cause }).cause).toBe(cause);
    expect(new ProviderAuthError("pa")).toMatchObject({ kind: "auth", attempts: 1, calls: [] });
    expect(new GitError("g", { args: ["status"] }).args).toEqual(["status"]);
    expect(new GitError("g").args).toEqual([]);
    const escaped = new AgentEscaped("e", { paths: ["../x"], attempt: 2 });
    expect(escaped).toMatchObject({ name: "AgentEscaped", paths: ["../x"], attempt: 2 });
    expect(RunError.isInstance(escaped)).toBe(true);
    expect(GitError.isInstance(escaped)).toBe(false);
  });

  it("codeOf reads the code of a Node, undici or database error", () => {
    expect(codeOf(Object.assign(new Error("x"), { code: "ENOENT" }))).toBe("ENOENT");
    expect(codeOf({ code: "55P03" })).toBe("55P03");
    expect(codeOf({ code: 7 })).toBeUndefined();
    expect(codeOf(null)).toBeUndefined();
    expect(codeOf("ECONNREFUSED")).toBeUndefined();
  });
});
