/**
 * The agent's sandbox (docs/implement.md#safety, issue 32): under bubblewrap a command sees its own
 * processes only, writes its working folder, the paths it was given and a private /tmp, reads the
 * user's checkout without writing it, never sees dissent's home, and has no network when
 * `implement.network` is false. Real bubblewrap (CI installs Debian's; without it the tests fail
 * with the error naming it). Where bubblewrap is missing, `auto` says what that leaves open.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ConfigError } from "../../src/errors.js";
import { runCommand } from "../../src/implement/command.js";
import { openSandbox, type SandboxPolicy } from "../../src/implement/sandbox.js";
import { scratch } from "../support/cli.js";

const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

/** A home with a clone in it, a secret file beside, a user's checkout and a writable folder elsewhere. */
function layout() {
  const s = scratch("dissent-sandbox-");
  cleanups.push(() => s.cleanup());
  const home = join(s.dir, "home");
  const clone = join(home, "worktrees", "issue-1");
  const repo = join(s.dir, "repo");
  const state = join(s.dir, "agent-state");
  const elsewhere = join(s.dir, "elsewhere");
  for (const d of [clone, repo, state, elsewhere]) mkdirSync(d, { recursive: true });
  writeFileSync(join(home, "dissent.db"), "the store");
  writeFileSync(join(repo, "file.txt"), "the user's\n");
  writeFileSync(join(elsewhere, "note.txt"), "not for the agent\n");
  const policy: SandboxPolicy = { workdir: clone, writable: [state], readable: [repo], hidden: [home], network: true };
  return { dir: s.dir, home, clone, repo, state, elsewhere, policy };
}

async function inSandbox(policy: SandboxPolicy, script: string) {
  const box = openSandbox("bubblewrap", () => undefined);
  const w = box.wrap("/bin/sh", ["-c", script], policy);
  return runCommand({ file: w.file, args: w.args, cwd: policy.workdir, env: { PATH: process.env.PATH ?? "" }, timeoutMs: 30_000, redact: (t) => t });
}

describe("bubblewrap", () => {
  it("the command sees only its own processes: not dissent, not its environment", async () => {
    const l = layout();
    const r = await inSandbox(
      l.policy,
      `ls /proc | grep -c '^[0-9]'; test -e /proc/${process.pid} && echo "SEES""-DISSENT"; cat /proc/1/cmdline | tr '\\0' ' '`,
    );
    const [count = "", ...rest] = r.output_tail.trim().split("\n");
    expect(Number(count)).toBeLessThan(10);
    expect(r.output_tail).not.toContain("SEES-DISSENT");
    expect(rest.join(" ")).toMatch(/^\S*bwrap --die-with-parent /);
  });

  it("writes its folder, the paths it was given and a private /tmp; reads the checkout but cannot write it; never sees dissent's home or anything else of /tmp", async () => {
    const l = layout();
    const r = await inSandbox(
      l.policy,
      [
        "echo made > made.txt && echo clone-ok",
        `echo s > ${l.state}/s.txt && echo state-ok`,
        "echo t > /tmp/t.txt && echo tmp-ok",
        `cat ${l.repo}/file.txt`,
        `echo x >> ${l.repo}/file.txt 2>/dev/null || echo repo-refused`,
        `test -e ${l.home}/dissent.db || echo home-hidden`,
        `echo y > ${l.home}/planted.txt 2>/dev/null || echo home-refused`,
        `test -e ${l.elsewhere}/note.txt || echo tmp-private`,
      ].join("; "),
    );
    for (const word of ["clone-ok", "state-ok", "tmp-ok", "the user's", "repo-refused", "home-hidden", "home-refused", "tmp-private"])
      expect(r.output_tail).toContain(word);
    expect(readFileSync(join(l.clone, "made.txt"), "utf8")).toBe("made\n");
    expect(readFileSync(join(l.state, "s.txt"), "utf8")).toBe("s\n");
    expect(readFileSync(join(l.repo, "file.txt"), "utf8")).toBe("the user's\n");
  });

  it("implement.network: false cuts the network (a server on this machine's loopback is out of reach); true keeps it", async () => {
    const l = layout();
    const server: Server = createServer((c) => c.end("hello from the host\n"));
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    cleanups.push(() => new Promise<void>((r) => server.close(() => r())));
    const port = (server.address() as { port: number }).port;
    const dial = `${process.execPath} -e 'require("net").connect(${port}, "127.0.0.1").on("data", (d) => process.stdout.write(String(d))).on("error", (e) => console.log("refused", e.code))'`;
    expect((await inSandbox(l.policy, dial)).output_tail).toContain("hello from the host");
    expect((await inSandbox({ ...l.policy, network: false }, dial)).output_tail).toMatch(/refused ECONNREFUSED/);
  });
});

describe("implement.sandbox where bubblewrap cannot run", () => {
  const nowhere = { PATH: "/nonexistent" };
  it("bubblewrap: a configuration error naming it", () => {
    expect(() => openSandbox("bubblewrap", () => undefined, nowhere)).toThrow(ConfigError);
    expect(() => openSandbox("bubblewrap", () => undefined, nowhere)).toThrow(
      /implement\.sandbox is bubblewrap but it cannot run here: bwrap is not installed/,
    );
  });

  it("auto: unsandboxed, with one warning naming the risk; none: unsandboxed, said nothing", () => {
    const warnings: string[] = [];
    expect(openSandbox("auto", (m) => warnings.push(m), nowhere).kind).toBe("none");
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/runs unsandboxed, as your user — it can read dissent's environment .* through \/proc and write anywhere you can/);
    expect(openSandbox("none", (m) => warnings.push(m), nowhere).kind).toBe("none");
    expect(warnings).toHaveLength(1);
  });
});
