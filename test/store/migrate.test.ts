/**
 * `dissent migrate --from-sqlite HOME` (docs/factory.md): an embedded store copied into PostgreSQL —
 * reply cache, events in their order, plans, artifacts, issues, adversarial states, wiki entries —
 * and read back by the CLI from the database exactly as it read them from the file.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { CliResult } from "../support/cli.js";
import { factoryWorld, type FactoryWorld } from "../support/factory-world.js";
import { freshDatabase } from "../support/postgres.js";
import { quoteUnderReview } from "../support/quote.js";

vi.setConfig({ testTimeout: 180_000 });

const GAP = "Acceptance criteria never mention concurrent writers to the same upload";

let w: FactoryWorld | undefined;
afterEach(async () => {
  await w?.close();
  w = undefined;
});

const ok = (r: CliResult) => {
  if (r.code !== 0) throw new Error(`exit ${String(r.code)}: ${r.stderr}`);
  return r.stdout;
};

describe("dissent migrate --from-sqlite", () => {
  it("copies everything; issue list/show, events, wiki and replays read identically from PostgreSQL; a second migrate is refused", async () => {
    w = await factoryWorld((model, _n, req) =>
      model === "spec.judge"
        ? { content: quoteUnderReview(req, JSON.stringify({ findings: [{ severity: "HIGH", category: "edge_cases", concern: GAP }] })) }
        : undefined,
    );
    const ids = [
      await w.newIssue("Accept file uploads on the profile page"),
      await w.newIssue("Fix the typo in the README", ["dissent-trivial"]),
      await w.newIssue("Add an audit log"),
    ];
    ok(await w.run(["factory", "--once"]));
    await w.newIssue("Not planned yet");
    // Issue 1 merges: its HIGH gap becomes a wiki entry; issue 3's gap is resolved by hand.
    ok(await w.run(["issue", "merged", "1", "--pr", "40"]));
    const pending3 = JSON.parse(ok(await w.run(["issue", "show", "3", "--json"]))) as { pending_concerns: { id: string }[] };
    ok(await w.run(["issue", "resolve", "3", String(pending3.pending_concerns[0]?.id), "--kind", "deferred", "--note", "next sprint"]));

    const reads = [
      ["issue", "list", "--json"],
      ["issue", "list"],
      ...ids.flatMap((id) => [
        ["issue", "show", id, "--json"],
        ["issue", "show", id],
        ["issue", "show", id, "--artifact", "plan"],
      ]),
      ["events", "--json"],
      ["events"],
      ["wiki", "list", "--json"],
    ];
    const before = await Promise.all(reads.map(async (args) => ok(await (w as FactoryWorld).run(args))));
    const wikiEntries = JSON.parse(before[reads.findIndex((a) => a[0] === "wiki")] ?? "[]") as { id: string }[];
    expect(wikiEntries).toHaveLength(1);
    const entryText = ok(await w.run(["wiki", "show", String(wikiEntries[0]?.id)]));

    // The same config, on PostgreSQL.
    const url = await freshDatabase();
    const config = join(w.dir, "pg.config.yaml");
    writeFileSync(config, `${readFileSync(join(w.dir, "dissent.config.yaml"), "utf8")}\nstore: { type: postgres }\n`);
    const pg = (args: string[]) => (w as FactoryWorld).run([...args, "--config", config], { env: { DISSENT_DATABASE_URL: url } });

    const migrated = await pg(["migrate", "--from-sqlite", w.home, "--json"]);
    expect(migrated.code, migrated.stderr).toBe(0);
    const out = JSON.parse(migrated.stdout) as { copied: Record<string, number> };
    expect(out.copied).toMatchObject({
      issues: 4,
      plans: 3,
      wiki: 1,
      events: (JSON.parse(`[${before[reads.findIndex((a) => a[0] === "events" && a[1] === "--json")]?.trim().split("\n").join(",")}]`) as unknown[]).length,
    });
    expect(out.copied.cache).toBeGreaterThan(0);
    expect(migrated.stdout).not.toContain(url);

    const after = await Promise.all(reads.map(async (args) => ok(await pg(args))));
    // Identical, but for where a wiki entry lives: a file under the home, or the database.
    const placeless = (text: string | undefined) => text?.replace(/"path":"[^"]*\/([^"/]+\.md)"/g, '"path":"$1"');
    for (const [i, args] of reads.entries()) expect(placeless(after[i]), args.join(" ")).toBe(placeless(before[i]));
    expect(after.at(-1)).toContain('"path":"the database/');
    expect(ok(await pg(["wiki", "show", String(wikiEntries[0]?.id)]))).toBe(entryText);

    // The reply cache came along: planning issue 2 again answers every call from it.
    const requests = w.server.requests.length;
    const replay = await pg(["issue", "plan", ids[1] ?? "", "--replay", "--replan", "--json"]); // it is ready: a new cycle takes --replan
    expect(replay.code, replay.stderr).toBe(0);
    expect(w.server.requests.length).toBe(requests);
    // New issues continue the numbering.
    expect(ok(await pg(["issue", "new", "--title", "After the move"])).trim()).toBe("5");

    const again = await pg(["migrate", "--from-sqlite", w.home]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(
      /^dissent: error: the PostgreSQL store at 127\.0\.0\.1:\d+\/\w+ is not empty \([^)]*5 issues[^)]*\): [^\n]*DROP SCHEMA dissent CASCADE[^\n]*\n$/,
    );
  });

  it("one-line errors: no embedded store at HOME; a config that does not name PostgreSQL", async () => {
    w = await factoryWorld();
    const url = await freshDatabase();
    const config = join(w.dir, "pg.config.yaml");
    writeFileSync(config, `${readFileSync(join(w.dir, "dissent.config.yaml"), "utf8")}\nstore: { type: postgres }\n`);
    const missing = await w.run(["migrate", "--from-sqlite", join(w.dir, "nowhere"), "--config", config], { env: { DISSENT_DATABASE_URL: url } });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^dissent: error: there is no embedded store at [^\n]*nowhere[^\n]*dissent\.db[^\n]*\n$/);
    const sqlite = await w.run(["migrate", "--from-sqlite", w.home]);
    expect(sqlite.code).toBe(2);
    expect(sqlite.stderr).toMatch(/^dissent: error: dissent migrate copies into PostgreSQL[^\n]*store: \{ type: postgres \}[^\n]*\n$/);
  });
});
