import { afterEach, describe, expect, it } from "vitest";
import { dissent, scratch } from "../support/cli.js";
import { freshDatabase } from "../support/postgres.js";
import { startDissent, until } from "../support/proc.js";

// `dissent events --follow` (docs/issue.md "Events"): the log so far, then every event another
// process commits, until Ctrl-C (130) or SIGTERM (143) — on SQLite and on PostgreSQL.

let s: ReturnType<typeof scratch> | undefined;
afterEach(() => s?.cleanup());

const CONFIG = {
  sqlite: "providers: {}\n",
  postgres: "providers: {}\nstore: { type: postgres }\n",
};

async function followWorld(kind: keyof typeof CONFIG) {
  s = scratch("dissent-follow-");
  s.write("dissent.config.yaml", CONFIG[kind]);
  const env: Record<string, string> = { DISSENT_HOME: `${s.dir}/home`, ...(kind === "postgres" ? { DISSENT_DATABASE_URL: await freshDatabase() } : {}) };
  const cwd = s.dir;
  const newIssue = async (title: string) => {
    const r = await dissent(["issue", "new", "--title", title, "--json"], { cwd, env });
    expect(r.code, r.stderr).toBe(0);
    return (JSON.parse(r.stdout) as { id: string }).id;
  };
  const follow = (args: string[]) => {
    const proc = startDissent(["events", "--follow", ...args], { cwd, env });
    let out = "";
    proc.child.stdout?.on("data", (d: Buffer) => (out += d.toString("utf8")));
    return { ...proc, lines: () => out.split("\n").filter(Boolean) };
  };
  const label = async (id: string, add: string) => {
    const r = await dissent(["issue", "label", id, "--add", add], { cwd, env });
    expect(r.code, r.stderr).toBe(0);
  };
  return { newIssue, label, follow };
}

describe.each(["sqlite", "postgres"] as const)("events --follow on %s", (kind) => {
  it("prints the log so far, then an event appended by another process; SIGTERM stops it with 143 and no error line", async () => {
    const w = await followWorld(kind);
    const first = await w.newIssue("Webhooks are lost");
    const f = w.follow(["--json"]);
    await until(() => f.lines().length >= 1, 30_000);
    expect(JSON.parse(f.lines()[0] ?? "")).toMatchObject({ type: "LabelChanged", issue_id: first });

    const second = await w.newIssue("Retries never stop");
    await until(() => f.lines().length >= 2, 30_000);
    expect(JSON.parse(f.lines()[1] ?? "")).toMatchObject({ type: "LabelChanged", issue_id: second, added: ["dissent-find"] });

    f.child.kill("SIGTERM");
    const r = await f.done;
    expect(r.code).toBe(143);
    expect(r.stderr).toBe("");
  }, 60_000);

  it("--issue follows one issue only; Ctrl-C stops it with 130", async () => {
    const w = await followWorld(kind);
    const first = await w.newIssue("Webhooks are lost");
    const f = w.follow(["--issue", first]);
    await until(() => f.lines().length >= 1, 30_000);
    await w.newIssue("Another issue");
    // An event of the followed issue after the other's: once it is printed, the follower has read past the other.
    await w.label(first, "needs-info");
    await until(() => f.lines().length >= 2, 30_000);
    f.child.kill("SIGINT");
    const r = await f.done;
    expect(r.code).toBe(130);
    const lines = r.stdout.trim().split("\n");
    expect(lines).toHaveLength(2);
    expect(lines[1]).toContain("+needs-info");
    expect(r.stdout).toContain("LabelChanged");
    expect(r.stderr).toBe("");
  }, 60_000);
});
