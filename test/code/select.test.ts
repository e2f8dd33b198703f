/**
 * The selection (issue 30): what each request carries of the code — the files an issue names and
 * their neighbours first, within the budget, verbatim, the same bytes for the same seeds however the
 * text is worded; context files ranked with the code; the code around a diff; a quote located.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ground, groundingText } from "../../src/adversarial/grounding.js";
import { diffContext, estimateTokens, locateQuote, openRepoMap, type RepoMap, selectContext } from "../../src/code/index.js";
import { git, ledgerFiles, makeRepo, type Repo, shopFiles } from "./repos.js";

let shop: Repo;
let ledger: Repo;
let shopMap: RepoMap;
let ledgerMap: RepoMap;
beforeAll(async () => {
  shop = makeRepo(shopFiles());
  ledger = makeRepo(ledgerFiles());
  shopMap = await openRepoMap({ kind: "local", root: shop.root }, {});
  ledgerMap = await openRepoMap({ kind: "local", root: ledger.root }, {});
});
afterAll(() => {
  shop.remove();
  ledger.remove();
});

const RETRY_ISSUE =
  "Retries sign requests twice: the `beforeRequest` hooks run again inside withRetry (src/http/retry.ts), so the token is added on every attempt.";
const mapFiles = (ctx: ReturnType<typeof selectContext>) => ctx.chosen.filter((c) => c.kind === "map").map((c) => c.path);
const excerpts = (ctx: ReturnType<typeof selectContext>) => ctx.chosen.filter((c) => c.kind !== "map").map((c) => `${c.path}:${c.start_line}-${c.end_line}`);

/** Each `### path:a-b` excerpt of a context, with its lines as they follow the header. */
function excerptBodies(text: string): { path: string; start: number; end: number; body: string[] }[] {
  const out: { path: string; start: number; end: number; body: string[] }[] = [];
  const parts = text.split(/^### /m).slice(1);
  for (const p of parts) {
    const [head = "", ...rest] = p.replace(/\n+$/, "").split("\n");
    const m = /^(.+):(\d+)-(\d+)$/.exec(head);
    if (m) out.push({ path: m[1] as string, start: Number(m[2]), end: Number(m[3]), body: rest });
  }
  return out;
}

describe("selectContext", () => {
  it("ranks the files an issue names and their neighbours first, and shows the named code whole", () => {
    const ctx = selectContext(shopMap, { texts: [RETRY_ISSUE] }, { budgetTokens: 2000 });
    expect(ctx.seeds).toEqual({
      paths: ["src/http/retry.ts"],
      identifiers: ["beforeRequest", "withRetry"],
      terms: ["retry"],
      locations: [],
      subject: ["retry"],
    });
    expect(new Set(mapFiles(ctx).slice(0, 2))).toEqual(new Set(["src/http/retry.ts", "src/http/client.ts"]));
    // withRetry whole, its doc comment (the contract) included; and beforeRequest and its caller in the client.
    expect(excerpts(ctx)).toEqual(expect.arrayContaining(["src/http/retry.ts:8-23"]));
    expect(ctx.text).toContain(" * Runs `attempt` up to `opts.attempts` times. Contract: `beforeRequest` hooks run again on every");
    const client = excerptBodies(ctx.text).filter((e) => e.path === "src/http/client.ts");
    expect(client.flatMap((e) => e.body).join("\n")).toContain("  beforeRequest(hook: Hook): void {");
    const retryItem = ctx.chosen.find((c) => c.path === "src/http/retry.ts" && c.start_line === 8);
    expect(retryItem?.terms).toEqual(expect.arrayContaining(["withRetry", "src/http/retry.ts"]));
    expect(retryItem?.why).toContain("defines `withRetry`, named in the issue");

    const py = selectContext(
      ledgerMap,
      { texts: ['Depositing "12.345" fails with "amount has more than two decimals" from `to_cents`; `Account.deposit` should round instead.'] },
      { budgetTokens: 1500 },
    );
    expect(py.seeds.identifiers).toEqual(["Account", "deposit", "to_cents"]);
    expect(py.seeds.terms).toContain("amount has more than two decimals");
    expect(new Set(mapFiles(py).slice(0, 2))).toEqual(new Set(["ledger/money.py", "ledger/accounts.py"]));
    expect(excerpts(py).slice(0, 2)).toEqual(expect.arrayContaining(["ledger/money.py:1-6"]));
  });

  it("leads with the module the title names: one the body mentions in passing does not push it down", () => {
    const body =
      "A failed checkout prints the raw total in cents. Support found it while answering tickets about expired session cookies; it happens several times a day.";
    const titled = selectContext(shopMap, { texts: [`# Checkout errors print the total in cents\n\n${body}`] }, { budgetTokens: 6000 });
    expect(titled.seeds.terms).toEqual(["checkout", "cookies", "session", "time"]);
    expect(titled.seeds.subject).toEqual(["checkout"]);
    expect(excerpts(titled)[0]).toMatch(/^src\/checkout\.ts:/);
    const before = (ctx: ReturnType<typeof selectContext>, a: string, b: string) =>
      excerpts(ctx).findIndex((e) => e.startsWith(a)) < excerpts(ctx).findIndex((e) => e.startsWith(b));
    expect(before(titled, "src/checkout.ts", "src/auth/session.ts")).toBe(true);
    expect(mapFiles(titled).indexOf("src/checkout.ts")).toBeLessThan(mapFiles(titled).indexOf("src/auth/cookies.ts"));
    // The same words with no title to name a subject: every module word counts the same, and the session code leads.
    const untitled = selectContext(shopMap, { texts: [`Bug report\n\n${body}`] }, { budgetTokens: 6000 });
    expect(untitled.seeds.subject).toBeUndefined();
    expect(excerpts(untitled)[0]).toMatch(/^src\/auth\/session\.ts:/);
  });

  it("lists a file whose code is excerpted in the map by its path alone; the others with their signatures", () => {
    const ctx = selectContext(shopMap, { texts: [RETRY_ISSUE] }, { budgetTokens: 3000 });
    const map = ctx.text.split("\n\n### ")[0]?.split("\n") ?? [];
    const shown = new Set(ctx.chosen.filter((c) => c.kind !== "map").map((c) => c.path));
    expect(shown.has("src/http/retry.ts")).toBe(true);
    const at = map.indexOf("src/http/retry.ts");
    expect(at).toBeGreaterThan(0);
    expect(map[at + 1]).not.toMatch(/^ {2}\d+: /);
    expect(ctx.text).not.toContain("  12: export async function withRetry");
    const unshown = mapFiles(ctx).filter((p) => !shown.has(p) && (shopMap.index.byPath.get(p)?.defs.length ?? 0) > 0);
    expect(unshown.length).toBeGreaterThan(0);
    for (const p of unshown) {
      const line = map.indexOf(p);
      expect(map[line + 1], p).toMatch(/^ {2}\d+: /);
    }
  });

  it("fits the budget, and every excerpt is the file's lines verbatim under its path and line range", () => {
    for (const budget of [300, 1000, 2500, 6000]) {
      const ctx = selectContext(shopMap, { texts: [RETRY_ISSUE] }, { budgetTokens: budget });
      expect(ctx.tokens).toBeLessThanOrEqual(budget);
      expect(ctx.tokens).toBe(estimateTokens(ctx.text));
      // A small budget is used, not left empty (a large one takes what is relevant, not the whole repository).
      if (budget <= 300) expect(ctx.tokens).toBeGreaterThan(budget * 0.6);
      const bodies = excerptBodies(ctx.text);
      expect(bodies.length).toBeGreaterThan(0);
      for (const e of bodies) {
        const lines = shopMap.index.byPath.get(e.path)?.lines ?? [];
        expect(e.body).toEqual(lines.slice(e.start - 1, e.end));
      }
    }
    expect(selectContext(shopMap, { texts: [RETRY_ISSUE] }, { budgetTokens: 0 })).toMatchObject({ text: "", tokens: 0, chosen: [] });
  });

  it("gives the same bytes for the same repository and seeds: across runs, and when only the wording of the texts changes", async () => {
    const again = await openRepoMap({ kind: "local", root: shop.root }, {});
    const a = selectContext(shopMap, { texts: [RETRY_ISSUE] }, { budgetTokens: 3000 });
    const b = selectContext(again, { texts: [RETRY_ISSUE] }, { budgetTokens: 3000 });
    expect(b.text).toBe(a.text);
    expect(b.digest).toBe(a.digest);
    expect(b.chosen).toEqual(a.chosen);
    // A rewritten plan that names the same things: the same context, byte for byte.
    const reworded = selectContext(
      shopMap,
      {
        texts: [
          "Plan, second round. Every attempt that withRetry makes calls the `beforeRequest` hooks again, on each of the retries; src/http/retry.ts is where the loop lives. We will sign once, before the first attempt.",
        ],
      },
      { budgetTokens: 3000 },
    );
    expect(reworded.seeds).toEqual(a.seeds);
    expect(reworded.text).toBe(a.text);
    // Naming something else changes it.
    const other = selectContext(shopMap, { texts: [`${RETRY_ISSUE} Also \`readCookie\` returns a stale token.`] }, { budgetTokens: 3000 });
    expect(other.digest).not.toBe(a.digest);
    expect(other.text).toContain("export function readCookie(name: string): string | undefined {");
  });

  it("reads stack frames and tracebacks as the lines they name", () => {
    const js = selectContext(
      shopMap,
      { texts: ["TypeError: boom\n    at withRetry (/home/ci/shop/src/http/retry.ts:16:22)\n    at HttpClient.send (src/http/client.ts:16:12)"] },
      { budgetTokens: 1200 },
    );
    expect(js.seeds.locations).toEqual(["src/http/client.ts:16", "src/http/retry.ts:16"]);
    const frame = js.chosen.find((c) => c.path === "src/http/retry.ts" && (c.start_line ?? 0) <= 16 && 16 <= (c.end_line ?? 0));
    expect(frame?.why).toContain("holds src/http/retry.ts:16, named in the issue");
    const py = selectContext(
      ledgerMap,
      {
        texts: [
          'Traceback (most recent call last):\n  File "/srv/app/ledger/accounts.py", line 11, in deposit\n  File "/srv/app/ledger/money.py", line 5, in to_cents\nValueError: amount has more than two decimals',
        ],
      },
      { budgetTokens: 1200 },
    );
    expect(py.seeds.locations).toEqual(["ledger/accounts.py:11", "ledger/money.py:5"]);
    expect(excerpts(py)).toEqual(expect.arrayContaining(["ledger/money.py:1-6"]));
  });

  it("ranks context files with the code: the section that matches is chosen, not the whole file", () => {
    const guide = [
      "# Architecture",
      "",
      "The shop is a set of modules.",
      "",
      "## Retries",
      "",
      "withRetry wraps every request; hooks registered with beforeRequest run on each attempt.",
      "",
      "## Deployment",
      "",
      "We deploy on Fridays to a single region with a blue-green switch and no database migrations.",
    ].join("\n");
    const ctx = selectContext(shopMap, { texts: [RETRY_ISSUE], extraSources: [{ path: "docs/ARCHITECTURE.md", text: guide }] }, { budgetTokens: 3000 });
    const chunk = ctx.chosen.find((c) => c.path === "docs/ARCHITECTURE.md");
    expect(chunk).toMatchObject({ kind: "file_chunk", start_line: 5, end_line: 8 });
    expect(ctx.text).toContain("### docs/ARCHITECTURE.md:5-8\n## Retries\n");
    expect(ctx.text).not.toContain("We deploy on Fridays");
  });
});

describe("locateQuote", () => {
  it("names the file and lines a quote of the code comes from; a made-up quote comes from nowhere", () => {
    const ctx = selectContext(shopMap, { texts: [RETRY_ISSUE] }, { budgetTokens: 3000 });
    const quote = "for (const h of this.hooks) req = h(req);";
    expect(ground(groundingText(ctx.text), quote).grounded).toBe(true);
    expect(locateQuote(ctx, quote)).toEqual({ path: "src/http/client.ts", start_line: 18, end_line: 18 });
    // Near-verbatim, as a model writes it (curly quotes, whitespace, a line break), over two lines.
    expect(
      locateQuote(ctx, "export async function withRetry<T>(attempt: (n: number) => Promise<T>, opts: RetryOptions): Promise<T> {\n  let last: unknown;"),
    ).toEqual({
      path: "src/http/retry.ts",
      start_line: 12,
      end_line: 13,
    });
    expect(locateQuote(ctx, "for (const h of this.hooks) req = h(req, attempt);")).toBeUndefined();
    expect(locateQuote(ctx, "the retry loop signs once")).toBeUndefined();
  });
});

describe("diffContext", () => {
  it("shows the definitions a diff changes, whole, and their callers", async () => {
    const repo = makeRepo(shopFiles());
    try {
      const before = shopMap.index.byPath.get("src/http/retry.ts")?.text ?? "";
      repo.write("src/http/retry.ts", before.replace("await sleep(opts.backoffMs * n);", "await sleep(opts.backoffMs * 2 ** n);"));
      const diff = git(repo.root, "diff");
      const after = await openRepoMap({ kind: "local", root: repo.root }, {});
      const ctx = diffContext(after, diff, { budgetTokens: 2000 });
      expect(ctx.seeds.identifiers).toEqual(["withRetry"]);
      expect(excerpts(ctx)[0]).toBe("src/http/retry.ts:8-23");
      expect(ctx.chosen[0]?.why).toBe("changed by the diff (`withRetry`)");
      const caller = ctx.chosen.find((c) => c.path === "src/http/client.ts");
      expect(caller).toMatchObject({ start_line: 15, end_line: 21, why: "calls `withRetry`, which the diff changes" });
      expect(ctx.text).toContain("await sleep(opts.backoffMs * 2 ** n);");
      expect(ctx.tokens).toBeLessThanOrEqual(2000);
    } finally {
      repo.remove();
    }
  });
});
