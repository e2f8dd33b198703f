/**
 * `dissent doctor` reports the repository the councils read (issue 30): its files and languages, and
 * whether its map came from the store (and when it was built) — through the built CLI.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeOllama, type FakeOllama } from "../engines/support.js";
import { dissent } from "../support/cli.js";
import { makeRepo, type Repo, shopFiles } from "./repos.js";

let ollama: FakeOllama;
let repo: Repo;
beforeAll(async () => {
  ollama = await startFakeOllama({ models: [{ name: "qwen3:8b", family: "qwen3" }] });
  repo = makeRepo(shopFiles());
});
afterAll(async () => {
  await ollama.close();
  repo.remove();
});

describe("dissent doctor with project.repo", () => {
  it("reports the repository as a row: files, languages, and a map built now, then read back from the store", async () => {
    writeFileSync(
      join(repo.root, "dissent.config.yaml"),
      `providers:\n  ollama: { type: openai-compatible, base_url: "${ollama.url}/v1" }\nroutes:\n  default: { primary: "ollama:qwen3:8b" }\nproject:\n  repo: .\n`,
    );
    // The home is the default ./.dissent inside the checkout: the map leaves dissent's own files out (counted as ignored).
    const run = (args: string[]) => dissent(args, { cwd: repo.root, env: {}, timeoutMs: 60_000 });
    const first = await run(["doctor", "--json"]);
    expect(first.code).toBe(0);
    const a = JSON.parse(first.stdout) as { ok: boolean; repository: Record<string, unknown> };
    expect(a.ok).toBe(true);
    // The config file is untracked and not ignored: it is in the map too (and the work tree differs from HEAD).
    expect(a.repository).toMatchObject({ where: repo.root, ok: true, commit: repo.commit(), from_cache: false, languages: { typescript: 32 } });
    const at = repo.commit().slice(0, 12);
    expect(a.repository.detail).toBe(
      `35 files (typescript 32, json 1, markdown 1, yaml 1), skipped 3 ignored; map built now (32 files parsed); at ${at} with changes`,
    );

    const second = await run(["doctor"]);
    expect(second.code).toBe(0);
    const row = second.stdout.split("\n").find((l) => l.startsWith("repository"));
    expect(row?.split(/\s{2,}/)).toEqual([
      "repository",
      repo.root,
      "ok",
      `35 files (typescript 32, json 1, markdown 1, yaml 1), skipped 3 ignored; map from just now (in the store); at ${at} with changes`,
    ]);
  });
});
