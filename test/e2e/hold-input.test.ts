/**
 * Issue #9 end to end, bad input and bad state (defects 13–18), through the built CLI:
 *  13 a YAML alias bomb in a config or a wiki entry;
 *  14 a CRITICAL concern starting with a very long identifier, merged into the wiki;
 *  15 unbounded reads (/dev/zero as a body file, as stdin; a policy file beyond the limit);
 *  16 numbers out of range (call_timeout_ms, --pr);
 *  17 policy and constraint paths that do not exist;
 *  18 a damaged store, and a read-only home (as an unprivileged user when the tests run as root).
 */
import { mkdirSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { TRANSIENT_LABELS } from "../../src/contracts/labels.js";
import type { CliResult } from "../support/cli.js";
import { errorLine } from "../support/e2e.js";
import {
  aliasBomb,
  cliLine,
  dissentUnprivileged,
  findings,
  holdConfig,
  holdWorld,
  linesOf,
  noiseBytes,
  ok,
  readOnlyTree,
  requestText,
  sh,
  writableTree,
  type HoldWorld,
} from "../support/hold.js";

vi.setConfig({ testTimeout: 180_000 });

let w: HoldWorld | undefined;
afterEach(async () => {
  if (w) {
    try {
      writableTree(w.dir);
    } catch {
      // already gone
    }
  }
  await w?.close();
  w = undefined;
});

const TITLE = "Add comment threads to blog posts";
const BODY = "Readers reply to comments; replies nest under the comment they answer.";
const PROMPT = "What is 2 + 2?";

/** Not an internal error: a line that names what is at fault. */
function expectNamedError(r: CliResult, code: number, ...names: string[]): string {
  expect(r.code, r.stderr).toBe(code);
  const line = errorLine(r);
  expect(line).not.toMatch(/internal error/i);
  for (const n of names) expect(line).toContain(n);
  return line;
}

interface ShowJson {
  status: string;
  labels: string[];
  pending_concerns: { severity: string; concern: string }[];
}
const show = async (id: string) => JSON.parse(ok(await (w as HoldWorld).run(["issue", "show", id, "--json"]), "issue show").stdout) as ShowJson;

describe("defect 13: a YAML alias bomb", () => {
  it("in dissent.config.yaml: exit 2 naming the file, for every command, before any request", async () => {
    w = await holdWorld();
    w.write("dissent.config.yaml", `${holdConfig(w.server.url)}${aliasBomb("x-anchors")}`);
    for (const args of [
      ["issue", "list"],
      ["run", PROMPT],
      ["issue", "new", "--title", TITLE],
    ]) {
      const r = await w.run(args, { timeoutMs: 60_000 });
      expectNamedError(r, 2, "dissent.config.yaml");
    }
    expect(w.server.requests).toHaveLength(0);
  });

  it("in a file named by --config, with the bomb under a real key: exit 2 naming that file", async () => {
    w = await holdWorld();
    const config = holdConfig(w.server.url).replace("seed: 7\n", "");
    w.write("bomb.yaml", `${config}${aliasBomb("policies_src")}policies: *i\n`);
    const r = await w.run(["run", "--config", "bomb.yaml", PROMPT], { timeoutMs: 60_000 });
    expectNamedError(r, 2, "bomb.yaml");
    expect(w.server.requests).toHaveLength(0);
  });

  it("in a wiki entry's front matter: skipped with a warning naming it; wiki list, wiki show of another entry and issue plan still work", async () => {
    w = await holdWorld();
    const id = await w.newIssue(TITLE, BODY);
    const wiki = join(w.home, "wiki");
    mkdirSync(wiki, { recursive: true });
    const at = "2025-01-01T00:00:00.000Z";
    writeFileSync(
      join(wiki, "comment-threads-nesting-0a1b2c3d.md"),
      [
        "---",
        "title: Comment threads allow unbounded nesting depth",
        "confidence: low",
        "stale: false",
        "pr: 3",
        "prs: [3]",
        'issue: "90"',
        'issues: ["90"]',
        "source: shipped-with-known-gap",
        "fingerprint: 0a1b2c3d4e5f60718293a4b5c6d7e8f9",
        "severity: CRITICAL",
        "category: edge_cases",
        `created: ${at}`,
        `updated: ${at}`,
        "---",
        "# Comment threads allow unbounded nesting depth",
        "",
        "Shipped with this gap in PR #3 (issue 90): replies to comments nest without limit.",
        "",
      ].join("\n"),
    );
    writeFileSync(
      join(wiki, "bomb-entry.md"),
      `---\ntitle: Comment threads bomb\nfingerprint: ffff\n${aliasBomb("x")}---\n# Comment threads bomb\n\nComment threads reply.\n`,
    );

    const list = await w.run(["wiki", "list"], { timeoutMs: 60_000 });
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toContain("comment-threads-nesting-0a1b2c3d");
    expect(list.stdout).not.toContain("bomb-entry");
    const warned = linesOf(list.stderr).filter((l) => l.includes("bomb-entry"));
    expect(warned, list.stderr).toHaveLength(1);
    expect(warned[0]).toMatch(/warning/);

    const listJson = await w.run(["wiki", "list", "--json"], { timeoutMs: 60_000 });
    expect(listJson.code, listJson.stderr).toBe(0);
    expect((JSON.parse(listJson.stdout) as { id: string }[]).map((e) => e.id)).toEqual(["comment-threads-nesting-0a1b2c3d"]);

    const good = await w.run(["wiki", "show", "comment-threads-nesting-0a1b2c3d"], { timeoutMs: 60_000 });
    expect(good.code, good.stderr).toBe(0);
    expect(good.stdout).toContain("unbounded nesting depth");

    const plan = await w.run(["issue", "plan", id, "--json"], { timeoutMs: 120_000 });
    expect(plan.code, plan.stderr).toBe(0);
    expect(
      linesOf(plan.stderr).some((l) => l.includes("bomb-entry") && /warning/.test(l)),
      plan.stderr,
    ).toBe(true);
    const after = await show(id);
    expect(after.status).not.toBe("planning");
    expect(after.status).toBe("ready");
    for (const t of TRANSIENT_LABELS) expect(after.labels).not.toContain(t);
    // the good entry still reaches the assumption surfacer of a related issue
    const surfacer = w.requestsOf("assumption_surfacer").map(requestText).join("\n");
    expect(surfacer).toContain("unbounded nesting depth");
  });
});

describe("defect 14: a CRITICAL concern that starts with a very long identifier", () => {
  it("issue merged succeeds and the wiki file name stays short", async () => {
    const IDENT = `${"AbstractSingletonProxyFactoryBean".repeat(9)}Impl`; // 301 characters, no spaces
    const DOTTED = Array.from({ length: 40 }, (_, i) => `pkg${i}`).join("."); // dotted, 250+ characters
    expect(IDENT.length).toBeGreaterThanOrEqual(300);
    const EVIDENCE = "A plain, stable draft from discover.brief";
    w = await holdWorld({
      "discovery.problem_sharpener": findings([
        { severity: "CRITICAL", category: "problem", evidence: EVIDENCE, concern: `${IDENT} leaks connections when the comment thread is closed` },
      ]),
      "spec.judge": findings([
        {
          severity: "HIGH",
          category: "edge_cases",
          evidence: "The change is covered by an automated test.",
          concern: `${DOTTED}.CommentThread is never tested with deep nesting`,
        },
      ]),
    });
    const id = await w.newIssue(TITLE, BODY);
    const planned = JSON.parse(ok(await w.run(["issue", "plan", id, "--json"]), "plan").stdout) as {
      pending_concerns: { severity: string; concern: string }[];
    };
    expect(planned.pending_concerns.some((c) => c.severity === "CRITICAL" && c.concern.startsWith(IDENT))).toBe(true);

    const merged = await w.run(["issue", "merged", id, "--pr", "42", "--json"]);
    expect(merged.code, merged.stderr).toBe(0);
    const out = JSON.parse(merged.stdout) as { wiki_entries: string[] };
    expect(out.wiki_entries.length).toBeGreaterThanOrEqual(1);
    const files = (await import("node:fs")).readdirSync(join(w.home, "wiki"));
    expect(files.length).toBeGreaterThanOrEqual(1);
    for (const f of files) expect(f.length, f).toBeLessThan(100);
    for (const e of out.wiki_entries) expect(e.length, e).toBeLessThan(100);
    // the entry keeps the whole concern, and shows
    const list = JSON.parse(ok(await w.run(["wiki", "list", "--json"]), "wiki list").stdout) as { id: string }[];
    const texts = await Promise.all(list.map(async (e) => ok(await (w as HoldWorld).run(["wiki", "show", e.id]), "wiki show").stdout));
    expect(texts.join("\n")).toContain(IDENT);
    // merging again is idempotent, never an ENAMETOOLONG
    const again = await w.run(["issue", "merged", id, "--pr", "42"]);
    expect(again.code, again.stderr).toBe(0);
  });
});

describe("defect 15: unbounded reads fail fast with one line naming the limit", () => {
  it("issue new --body-file /dev/zero", async () => {
    w = await holdWorld();
    const r = await w.run(["issue", "new", "--title", TITLE, "--body-file", "/dev/zero"], { timeoutMs: 60_000 });
    const line = expectNamedError(r, 2);
    expect(line).toMatch(/limit|not a regular file/i); // a device is refused outright (docs/limits.md)
    expect(line).toMatch(/body-file|\/dev\/zero/);
    const list = await w.run(["issue", "list", "--json"]);
    expect(JSON.parse(ok(list, "list").stdout)).toEqual([]);
  });

  it("issue new --body-file - with stdin from /dev/zero", async () => {
    w = await holdWorld();
    const r = await sh(`exec ${cliLine(["issue", "new", "--title", TITLE, "--body-file", "-"])} < /dev/zero`, {
      cwd: w.dir,
      env: { DISSENT_HOME: w.home },
      timeoutMs: 60_000,
    });
    expect(expectNamedError(r, 2)).toMatch(/limit/i);
  });

  it("run < /dev/zero (stdin a character device) and cat /dev/zero | run (a pipe)", async () => {
    w = await holdWorld();
    const redirected = await sh(`exec ${cliLine(["run"])} < /dev/zero`, { cwd: w.dir, env: { DISSENT_HOME: w.home }, timeoutMs: 60_000 });
    expect(expectNamedError(redirected, 2)).toMatch(/limit/i);
    const piped = await sh(`cat /dev/zero | ${cliLine(["run", "--audit"])}`, { cwd: w.dir, env: { DISSENT_HOME: w.home }, timeoutMs: 60_000 });
    expect(expectNamedError(piped, 2)).toMatch(/limit/i);
    expect(w.server.requests).toHaveLength(0);
  });

  it("a body file and a policy file larger than the limit, by flag and in the config", async () => {
    w = await holdWorld();
    w.write("big-body.txt", "word ".repeat(1_000_000)); // ~5 MB
    const body = await w.run(["issue", "new", "--title", TITLE, "--body-file", "big-body.txt"]);
    expect(expectNamedError(body, 2)).toMatch(/limit/i);

    w.write("big-policy.md", `${"Never give medical dosing advice. ".repeat(40_000)}\n`); // ~1.3 MB
    const flag = await w.run(["run", "--audit", "--policy", "./big-policy.md", PROMPT]);
    const line = expectNamedError(flag, 2, "big-policy.md");
    expect(line).toMatch(/limit/i);

    w.write("dissent.config.yaml", holdConfig(w.server.url, { extra: 'policies: ["./big-policy.md"]\n' }));
    const config = await w.run(["run", "--audit", PROMPT]);
    expect(expectNamedError(config, 2, "big-policy.md")).toMatch(/limit/i);
    expect(w.server.requests).toHaveLength(0);

    // a body well under the limit is fine
    w.write("dissent.config.yaml", holdConfig(w.server.url));
    w.write("body.txt", "Readers reply to comments.\n".repeat(1000));
    ok(await w.run(["issue", "new", "--title", TITLE, "--body-file", "body.txt"]), "a 27 KB body");
  });
});

describe("defect 16: numbers out of range are configuration errors", () => {
  it.each(["3000000000", "1e12", "-5", "0.5"])("call_timeout_ms: %s → exit 2 naming the key and the file", async (value) => {
    w = await holdWorld();
    w.write("dissent.config.yaml", holdConfig(w.server.url).replace(/call_timeout_ms: \d+/, `call_timeout_ms: ${value}`));
    const r = await w.run(["run", PROMPT]);
    expectNamedError(r, 2, "call_timeout_ms", "dissent.config.yaml");
    expect(r.stderr).not.toMatch(/TimeoutOverflowWarning/);
    expect(w.server.requests).toHaveLength(0);
  });

  it.each(["99999999999999999999999", "1e3", "0", "12abc", "4.5"])("issue merged --pr %s → exit 2, and nothing recorded", async (pr) => {
    w = await holdWorld();
    const id = await w.newIssue(TITLE, BODY);
    const before = await w.events(id);
    const r = await w.run(["issue", "merged", id, "--pr", pr]);
    expectNamedError(r, 2, "--pr");
    expect(await w.events(id)).toEqual(before);
    expect((await show(id)).labels).toEqual(["dissent-find"]);
    expect(r.stdout).toBe("");
  });
});

describe("defect 17: a policy path that does not exist is an error, never policy text", () => {
  it.each([
    ["--policy", "./policy.txt"],
    ["--policy", "policy.md"],
    ["--policy", "../elsewhere/rules.md"],
    ["--constraint", "./limits.txt"],
  ])("%s %s (missing) → exit 2 naming it, no request", async (flag, path) => {
    w = await holdWorld();
    const r = await w.run(["run", "--audit", flag, path, PROMPT]);
    expectNamedError(r, 2, path.replace(/^\.\//, ""));
    expect(w.server.requests).toHaveLength(0);
  });

  it('config policies: ["./missing.md"] → exit 2 naming it and the config, no request', async () => {
    w = await holdWorld({}, { extra: 'policies: ["./missing.md"]\n' });
    const r = await w.run(["run", "--audit", PROMPT]);
    expectNamedError(r, 2, "missing.md", "dissent.config.yaml");
    expect(w.server.requests).toHaveLength(0);
    const list = await w.run(["issue", "list"]);
    expectNamedError(list, 2, "missing.md");
  });

  it("text policies with spaces are text; an existing file's content is sent, not its path", async () => {
    w = await holdWorld();
    w.write("house-rules.md", "Always answer in metric units.\n");
    const r = await w.run([
      "run",
      "--audit",
      "--policy",
      "Never cite ./policy.txt as a source.",
      "--policy",
      "./house-rules.md",
      "--constraint",
      "Answer in under 200 words.",
      PROMPT,
    ]);
    expect(r.code, r.stderr).toBe(0);
    const challenger = w.requestsOf("challenger").map(requestText).join("\n");
    expect(challenger).toContain("Never cite ./policy.txt as a source.");
    expect(challenger).toContain("Always answer in metric units.");
    expect(challenger).not.toContain("./house-rules.md");
    expect(challenger).toContain("Answer in under 200 words.");
  });
});

describe("defect 18: store errors name the file and what to do", () => {
  const DB = "dissent.db";

  it("a dissent.db of random bytes: one line naming the file, never an internal error, no request", async () => {
    w = await holdWorld();
    mkdirSync(w.home, { recursive: true });
    writeFileSync(join(w.home, DB), noiseBytes(64 * 1024));
    for (const args of [["issue", "list"], ["issue", "new", "--title", TITLE], ["events"], ["run", PROMPT], ["wiki", "list"]]) {
      const r = await w.run(args);
      expect(r.code, `${args.join(" ")}: ${r.stderr}`).not.toBe(0);
      const line = errorLine(r);
      expect(line).not.toMatch(/internal error/i);
      expect(line).toContain(DB);
      expect(line).toMatch(/move|remove|delete|restore|backup/i);
    }
    expect(w.server.requests).toHaveLength(0);
  });

  it("a truncated dissent.db: one line naming the file, never an internal error", async () => {
    w = await holdWorld();
    const id = await w.newIssue(TITLE, BODY);
    ok(await w.run(["issue", "plan", id]), "plan");
    const file = join(w.home, DB);
    expect(statSync(file).size).toBeGreaterThan(16 * 1024);
    truncateSync(file, 8 * 1024);
    let failed = 0;
    for (const args of [["issue", "list"], ["issue", "show", id], ["events"], ["issue", "new", "--title", TITLE]]) {
      const r = await w.run(args);
      if (r.code === 0) continue; // what SQLite can still read, it may show
      failed++;
      const line = errorLine(r);
      expect(line).not.toMatch(/internal error/i);
      expect(line).toContain(DB);
    }
    expect(failed).toBeGreaterThan(0);
  });

  // As root the commands run as an unprivileged user (see dissentUnprivileged); elsewhere as this user.
  it("a read-only home: issue list, issue show, events and wiki list work; issue new fails with one line naming the file", async () => {
    w = await holdWorld();
    const id = await w.newIssue(TITLE, BODY);
    ok(await w.run(["issue", "plan", id]), "plan");
    // root ignores file modes: the commands below run as `nobody` then (see dissentUnprivileged)
    readOnlyTree(w.dir);
    const as = (args: string[]) => dissentUnprivileged(args, { cwd: (w as HoldWorld).dir, env: { DISSENT_HOME: (w as HoldWorld).home } });

    const list = await as(["issue", "list", "--json"]);
    expect(list.code, list.stderr).toBe(0);
    expect((JSON.parse(list.stdout) as { id: string; status: string }[]).map((i) => [i.id, i.status])).toEqual([[id, "ready"]]);
    const shown = await as(["issue", "show", id]);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain(TITLE);
    const events = await as(["events", "--json"]);
    expect(events.code, events.stderr).toBe(0);
    expect(linesOf(events.stdout).length).toBeGreaterThan(10);
    const wiki = await as(["wiki", "list"]);
    expect(wiki.code, wiki.stderr).toBe(0);

    const created = await as(["issue", "new", "--title", "Another issue"]);
    expect(created.code).not.toBe(0);
    const line = errorLine(created);
    expect(line).not.toMatch(/internal error/i);
    expect(line).toMatch(/dissent\.db|home/);
  });
});
