import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { fingerprint, fingerprintTokens } from "../../src/adversarial/fingerprint.js";
import type { Concern } from "../../src/contracts/concern.js";

/**
 * Content words, each with inflected forms that any well-kept English stemmer folds together
 * (plural s, -es/-ies, -ed, -ing). No form is a stop word, a negation or a quantifier, and no
 * two lemmas share a stem, so a concern built from them is identified by its lemma set.
 */
const LEMMAS: readonly (readonly string[])[] = [
  ["retry", "retries", "retried", "retrying"],
  ["test", "tests", "tested", "testing"],
  ["validate", "validates", "validated", "validating"],
  ["timeout", "timeouts"],
  ["handler", "handlers"],
  ["path", "paths"],
  ["query", "queries"],
  ["lock", "locks", "locked", "locking"],
  ["endpoint", "endpoints"],
  ["migration", "migrations"],
  ["log", "logs", "logged", "logging"],
  ["cache", "caches", "cached", "caching"],
  ["error", "errors"],
  ["request", "requests", "requested"],
  ["user", "users"],
  ["token", "tokens"],
  ["session", "sessions"],
  ["connection", "connections"],
  ["check", "checks", "checked", "checking"],
  ["fail", "fails", "failed", "failing"],
  ["field", "fields"],
  ["input", "inputs"],
  ["schema", "schemas"],
  ["file", "files"],
  ["column", "columns"],
  ["secret", "secrets"],
  ["worker", "workers"],
  ["parse", "parses", "parsed", "parsing"],
  ["escape", "escapes", "escaped"],
  ["batch", "batches"],
];

const CATEGORIES = ["test_strategy", "security", "correctness", "edge_cases", "performance", "convention", "scope_creep"] as const;

/** Common English stop words (a subset any reasonable stop list has). */
const STOP_WORDS = [
  "a",
  "an",
  "the",
  "of",
  "for",
  "to",
  "in",
  "on",
  "at",
  "by",
  "with",
  "is",
  "are",
  "was",
  "be",
  "been",
  "this",
  "that",
  "it",
  "and",
  "as",
  "from",
] as const;

/** Words that turn a concern into its opposite or otherwise tell two concerns apart: never dropped. */
const DISTINGUISHING = ["not", "no", "never", "without", "none", "before", "after", "all", "only", "every", "first", "last", "more", "fewer"] as const;

const SEPARATORS = [" ", "  ", "\t", "\n", " \n ", ", ", "; ", " - ", " — ", ": ", "... ", " / "] as const;
const WRAPS: readonly (readonly [string, string])[] = [
  ["", ""],
  ["(", ")"],
  ['"', '"'],
  ["`", "`"],
  ["[", "]"],
  ["*", "*"],
];
const ENDINGS = ["", ".", "!", "?", "...", ";", ":"] as const;

/** One generated concern: lemma indices (distinct), a chosen form per lemma and a category. */
interface Generated {
  lemmas: number[];
  forms: number[];
  category: (typeof CATEGORIES)[number];
}

const arbGenerated: fc.Arbitrary<Generated> = fc.record({
  lemmas: fc.uniqueArray(fc.integer({ min: 0, max: LEMMAS.length - 1 }), { minLength: 1, maxLength: 6 }),
  forms: fc.array(fc.nat({ max: 3 }), { minLength: 6, maxLength: 6 }),
  category: fc.constantFrom(...CATEGORIES),
});

const formOf = (lemma: number, form: number): string => {
  const forms = LEMMAS[lemma] as readonly string[];
  return forms[form % forms.length] as string;
};
const wordsOf = (g: Generated): string[] => g.lemmas.map((l, i) => formOf(l, g.forms[i] ?? 0));
const textOf = (g: Generated): string => wordsOf(g).join(" ");
/** The pinned fingerprint of "Missing test for the retry path." (a change must migrate stored ones). */
const PINNED = "d41efc064c2e381c";
const fp = (category: string | undefined, concern: string) => fingerprint(category === undefined ? { concern } : { category, concern });

describe("fingerprint: determinism", () => {
  it("pins the value of one concern, so a change across machines, processes or releases is caught", () => {
    // Stored fingerprints (pending concerns, oscillation detection, concern ids) outlive a process:
    // this value must never change without a migration of the stored ones.
    expect(fingerprint({ concern: "Missing test for the retry path." })).toBe(PINNED);
    // docs/library.md: the concern text alone — a category never changes it.
    expect(fingerprint({ category: "test_strategy", concern: "Missing test for the retry path." })).toBe(PINNED);
  });

  it("is a short lowercase hex string", () => {
    fc.assert(
      fc.property(arbGenerated, (g) => {
        expect(fp(g.category, textOf(g))).toMatch(/^[0-9a-f]{16}$/);
      }),
    );
  });

  it("gives the same string for the same input, every time and for equal copies", () => {
    fc.assert(
      fc.property(arbGenerated, (g) => {
        const c = { category: g.category, concern: textOf(g) };
        const first = fingerprint(c);
        expect(fingerprint(c)).toBe(first);
        expect(fingerprint({ ...c })).toBe(first);
        expect(fingerprint(JSON.parse(JSON.stringify(c)) as typeof c)).toBe(first);
      }),
    );
  });

  it("does not depend on the order of earlier calls (no hidden state)", () => {
    const a = { category: "security", concern: "Session tokens are logged in plain text" };
    const before = fingerprint(a);
    for (let i = 0; i < 50; i++) fingerprint({ category: `c${i}`, concern: `concern number ${i} about tokens` });
    expect(fingerprint(a)).toBe(before);
  });
});

describe("fingerprint: over the concern text alone (docs/library.md)", () => {
  const arbOther = fc.record({
    id: fc.string(),
    stage: fc.string(),
    phase: fc.constantFrom("discover", "shape", "plan", "spec", "review" as const),
    raised_by: fc.string(),
    severity: fc.constantFrom("CRITICAL", "HIGH", "MEDIUM", "LOW" as const),
    evidence: fc.string(),
    must_address_by: fc.constantFrom("shape", "plan", "spec", "review", "implement" as const),
    human_required: fc.boolean(),
    fingerprint: fc.string(),
    raised_at: fc.string(),
  });

  it("ignores severity, id, stage, phase, evidence and every other field", () => {
    fc.assert(
      fc.property(arbGenerated, arbOther, arbOther, (g, o1, o2) => {
        const a: Concern = { ...o1, category: g.category, concern: textOf(g) };
        const b: Concern = { ...o2, category: g.category, concern: textOf(g) };
        expect(fingerprint(a)).toBe(fingerprint(b));
        expect(fingerprint(a)).toBe(fingerprint({ category: g.category, concern: textOf(g) }));
      }),
    );
  });

  it("does not depend on the category (docs/library.md: category is free-form across critics)", () => {
    fc.assert(
      fc.property(arbGenerated, fc.constantFrom(...CATEGORIES), (g, other) => {
        expect(fp(g.category, textOf(g))).toBe(fp(other, textOf(g)));
      }),
    );
  });

  it("depends on the concern text", () => {
    fc.assert(
      fc.property(arbGenerated, arbGenerated, (g, h) => {
        const a = new Set(g.lemmas);
        const b = new Set(h.lemmas);
        fc.pre(a.size !== b.size || [...a].some((x) => !b.has(x)));
        expect(fp(g.category, textOf(g))).not.toBe(fp(g.category, textOf(h)));
      }),
    );
  });

  it("is decided by the concern text: moving words between category and concern changes it", () => {
    expect(fp("retry", "timeout")).not.toBe(fp("timeout", "retry"));
    expect(fp("", "retry timeout")).not.toBe(fp("retry", "timeout"));
  });

  it("the issue's pair: the same HIGH filed as `migration` by one critic and `risk` by another is one concern", () => {
    const text = "Missing rollback plan for the migration.";
    expect(fp("migration", text)).toBe(fp("risk", text));
    expect(fp(undefined, text)).toBe(fp("Test Strategy", text));
  });
});

describe("fingerprint: invariances (properties over generated concerns)", () => {
  it("is insensitive to case", () => {
    fc.assert(
      fc.property(arbGenerated, fc.array(fc.boolean(), { minLength: 1, maxLength: 64 }), (g, mask) => {
        const text = textOf(g);
        const flip = (s: string) => [...s].map((ch, i) => (mask[i % mask.length] ? ch.toUpperCase() : ch)).join("");
        expect(fp(flip(g.category), flip(text))).toBe(fp(g.category, text));
        expect(fp(g.category.toUpperCase(), text.toUpperCase())).toBe(fp(g.category, text));
      }),
    );
  });

  it("is insensitive to punctuation and whitespace", () => {
    fc.assert(
      fc.property(
        arbGenerated,
        fc.array(fc.constantFrom(...SEPARATORS), { minLength: 6, maxLength: 6 }),
        fc.array(fc.nat({ max: WRAPS.length - 1 }), { minLength: 6, maxLength: 6 }),
        fc.constantFrom(...ENDINGS),
        fc.constantFrom("", " ", "\n", "\t ", "- ", "> "),
        fc.constantFrom("", " ", "\n", " \t"),
        (g, seps, wraps, end, lead, trail) => {
          const ws = wordsOf(g).map((w, i) => {
            const [open, close] = WRAPS[wraps[i] ?? 0] as readonly [string, string];
            return `${open}${w}${close}`;
          });
          const noisy = lead + ws.map((w, i) => (i === 0 ? w : `${seps[i] ?? " "}${w}`)).join("") + end + trail;
          expect(fp(g.category, noisy)).toBe(fp(g.category, textOf(g)));
        },
      ),
    );
  });

  it("is insensitive to word order", () => {
    fc.assert(
      fc.property(
        arbGenerated.chain((g) => fc.tuple(fc.constant(g), fc.shuffledSubarray(wordsOf(g), { minLength: g.lemmas.length, maxLength: g.lemmas.length }))),
        ([g, shuffled]) => {
          expect(fp(g.category, shuffled.join(" "))).toBe(fp(g.category, textOf(g)));
        },
      ),
    );
  });

  it("is insensitive to plural s and inflection (retries/retry, tests/test, validated/validates)", () => {
    fc.assert(
      fc.property(arbGenerated, fc.array(fc.nat({ max: 3 }), { minLength: 6, maxLength: 6 }), (g, otherForms) => {
        const h: Generated = { ...g, forms: otherForms };
        expect(fp(g.category, textOf(h))).toBe(fp(g.category, textOf(g)));
      }),
    );
  });

  it("is insensitive to stop words inserted anywhere", () => {
    fc.assert(
      fc.property(arbGenerated, fc.array(fc.record({ at: fc.nat(), word: fc.constantFrom(...STOP_WORDS) }), { minLength: 1, maxLength: 8 }), (g, inserts) => {
        const ws = wordsOf(g);
        for (const { at, word } of inserts) ws.splice(at % (ws.length + 1), 0, word);
        expect(fp(g.category, ws.join(" "))).toBe(fp(g.category, textOf(g)));
      }),
    );
  });

  it("is insensitive to all of the above at once", () => {
    fc.assert(
      fc.property(
        arbGenerated.chain((g) =>
          fc.tuple(
            fc.constant(g),
            fc.shuffledSubarray(
              g.lemmas.map((_, i) => i),
              { minLength: g.lemmas.length, maxLength: g.lemmas.length },
            ),
          ),
        ),
        fc.array(fc.nat({ max: 3 }), { minLength: 6, maxLength: 6 }),
        fc.array(fc.record({ at: fc.nat(), word: fc.constantFrom(...STOP_WORDS) }), { maxLength: 5 }),
        fc.constantFrom(...SEPARATORS),
        fc.constantFrom(...ENDINGS),
        ([g, order], forms, inserts, sep, end) => {
          const ws = order.map((i) => formOf(g.lemmas[i] as number, forms[i] ?? 0));
          for (const { at, word } of inserts) ws.splice(at % (ws.length + 1), 0, word);
          const noisy = ws.map((w, i) => (i % 2 ? w.toUpperCase() : w)).join(sep) + end;
          expect(fp(g.category, noisy)).toBe(fp(g.category, textOf(g)));
        },
      ),
    );
  });
});

describe("fingerprint: never drops what tells concerns apart (properties)", () => {
  it("changes when a negation, quantifier or order word is inserted", () => {
    fc.assert(
      fc.property(arbGenerated, fc.nat(), fc.constantFrom(...DISTINGUISHING), (g, at, word) => {
        const ws = wordsOf(g);
        ws.splice(at % (ws.length + 1), 0, word);
        expect(fp(g.category, ws.join(" "))).not.toBe(fp(g.category, textOf(g)));
      }),
    );
  });

  it("changes when a contracted negation is inserted (doesn't, isn't, can't, won't)", () => {
    fc.assert(
      fc.property(arbGenerated, fc.nat(), fc.constantFrom("doesn't", "isn't", "can't", "won't", "cannot", "don't", "aren't", "doesn’t"), (g, at, word) => {
        const ws = wordsOf(g);
        ws.splice(at % (ws.length + 1), 0, word);
        expect(fp(g.category, ws.join(" "))).not.toBe(fp(g.category, textOf(g)));
      }),
    );
  });

  it("changes when a content word is swapped for another", () => {
    fc.assert(
      fc.property(arbGenerated, fc.integer({ min: 0, max: LEMMAS.length - 1 }), fc.nat(), (g, replacement, which) => {
        fc.pre(!g.lemmas.includes(replacement));
        const i = which % g.lemmas.length;
        const lemmas = [...g.lemmas];
        lemmas[i] = replacement;
        expect(fp(g.category, textOf({ ...g, lemmas }))).not.toBe(fp(g.category, textOf(g)));
      }),
    );
  });
});

describe("fingerprint: paraphrases that must match", () => {
  const SAME: readonly (readonly [string, string])[] = [
    // docs/library.md's own example.
    ["Missing test for the retry path.", "missing tests for retry path"],
    ["Missing test for the retry path.", "MISSING TESTS FOR THE RETRY PATH!!"],
    ["Missing test for the retry path.", "  missing   test\tfor the\nretry path  "],
    ["The plan does not handle an empty list.", "Empty lists are not handled by the plan"],
    ["Doesn't validate user input", "User input is not validated."],
    ["No timeout on retries", "Retries have no timeouts"],
    ["Rate limit missing on the login endpoint", "missing rate-limits on login endpoints"],
    ["Session tokens are logged in plain text!", "session token logged in plain-text"],
    ["The migration runs before the backup.", "migration runs before backup"],
    ["Cannot roll back the migration", "migrations can't be rolled back"],
    ["Retries are not capped", "retry isn't capped"],
    ["Errors from the parser are swallowed", "Parser errors swallowed"],
    ["Only admins can delete records", "records can only be deleted by admins"],
    ["Caché invalidation is untested", "cache invalidation is untested"],
    ["The retry path's test is missing", "Missing test for the retry path"],
  ];

  it.each(SAME)("%j ≈ %j", (a, b) => {
    expect(fingerprintTokens(a)).toEqual(fingerprintTokens(b));
    expect(fp(undefined, a)).toBe(fp(undefined, b));
    expect(fp("test_strategy", a)).toBe(fp("test_strategy", b));
  });
});

describe("fingerprint: different concerns that must NOT match", () => {
  const DIFFERENT: readonly (readonly [string, string])[] = [
    // A concern and its negation.
    ["validates input", "does not validate input"],
    ["validates input", "doesn't validate input"],
    ["Input is validated", "Input is not validated"],
    ["no timeout on retries", "timeout on retries"],
    ["retries without backoff", "retries with backoff"],
    ["never retried", "retried"],
    ["None of the handlers log errors", "the handlers log errors"],
    ["must not log secrets", "must log secrets"],
    ["Can't roll back the migration", "Can roll back the migration"],
    // Order and quantity words.
    ["runs before the migration", "runs after the migration"],
    ["all callers are affected", "some callers are affected"],
    ["every request is logged", "some requests are logged"],
    ["only admins can delete records", "admins can delete records"],
    ["the first retry has no delay", "the last retry has no delay"],
    ["more retries than the budget allows", "fewer retries than the budget allows"],
    // Different subjects.
    ["Missing test for the retry path", "Missing test for the timeout path"],
    ["HTTP 401 is not handled", "HTTP 403 is not handled"],
    ["cache reads are not invalidated", "cache writes are not invalidated"],
    ["race condition in the session cache", "deadlock in the session cache"],
    // Different scripts must not collapse into one fingerprint.
    ["Отсутствует тест для пути повтора", "Нет ограничения частоты запросов на входе"],
    ["缺少重试路径的测试", "没有超时"],
  ];

  it.each(DIFFERENT)("%j ≠ %j", (a, b) => {
    expect(fp(undefined, a)).not.toBe(fp(undefined, b));
    expect(fp("correctness", a)).not.toBe(fp("correctness", b));
  });

  it("identical text filed under two categories is one concern", () => {
    expect(fp("migration", "Missing rollback plan for the migration.")).toBe(fp("risk", "Missing rollback plan for the migration."));
  });

  it("keeps HTTP and HTTPS, and v1 and v2, apart", () => {
    expect(fp(undefined, "Redirect to HTTPS is missing")).not.toBe(fp(undefined, "Redirect to HTTP is missing"));
    expect(fp(undefined, "the https redirect is missing")).not.toBe(fp(undefined, "the http redirect is missing"));
    expect(fp(undefined, "Breaks the v1 API")).not.toBe(fp(undefined, "Breaks the v2 API"));
  });
});
