import { spawnSync } from "node:child_process";
import { accessSync, constants, existsSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigError } from "../errors.js";

/** `implement.sandbox` (docs/implement.md#safety). */
export type SandboxSetting = "auto" | "bubblewrap" | "none";

/** What one sandboxed command may see and write. */
export interface SandboxPolicy {
  /** The command's working folder (the agent's clone): writable, and where it starts. */
  workdir: string;
  /** Other paths it may write (`implement.writable`); a path that does not exist is left out. */
  writable: readonly string[];
  /** Paths it may read though they sit under a hidden one (the objects its clone borrows, its task file). */
  readable: readonly string[];
  /** Paths it may not see at all (dissent's home: the store, the cache, every other clone). */
  hidden: readonly string[];
  /** `implement.network`: false cuts every network but its own loopback. */
  network: boolean;
}

/** How commands of the agent and its tests are run. */
export interface Sandbox {
  kind: "bubblewrap" | "none";
  /** The command line that runs `file args` under the policy (`none`: the command itself). */
  wrap(file: string, args: readonly string[], policy: SandboxPolicy): { file: string; args: string[] };
}

/** Paths whose files give a process the user's or the machine's powers: never visible inside the sandbox. */
const ALWAYS_HIDDEN = ["/run/user", "/var/run/docker.sock", "/run/docker.sock", "/run/podman", "/var/run/podman"];

/** The first executable `name` on PATH. */
function onPath(name: string, path = process.env.PATH ?? ""): string | undefined {
  for (const dir of path.split(":").filter(Boolean)) {
    const file = join(dir, name);
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** A path as the kernel sees it (bubblewrap mounts on real paths); a missing one as given. */
function real(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

const depth = (p: string) => p.split("/").filter(Boolean).length;

/** The bubblewrap command line of a policy (docs/implement.md#safety lists what it does). */
export function bubblewrapArgs(policy: SandboxPolicy, file: string, args: readonly string[]): string[] {
  const out = ["--die-with-parent", "--new-session", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"];
  if (!policy.network) out.push("--unshare-net");
  // Root keeps every capability in the sandbox unless told: it could remount the read-only root.
  if (process.getuid?.() === 0) out.push("--cap-drop", "ALL");
  out.push("--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc");
  // Mounts nest: an outer path first, so what is bound inside a hidden or private folder shows through it.
  type Mount = { path: string; order: number; args: string[] };
  const mounts: Mount[] = [];
  for (const t of ["/tmp", "/var/tmp", "/dev/shm"].filter((p) => p === "/dev/shm" || existsSync(p))) mounts.push({ path: t, order: 0, args: ["--tmpfs", t] });
  for (const h of new Set(ALWAYS_HIDDEN.filter((p) => existsSync(p)).map(real))) {
    mounts.push({ path: h, order: 0, args: /\.sock$/.test(h) ? ["--ro-bind", "/dev/null", h] : ["--tmpfs", h] });
  }
  for (const h of policy.hidden.map(real)) mounts.push({ path: h, order: 1, args: ["--tmpfs", h, "--remount-ro", h] });
  for (const r of policy.readable.map(real)) mounts.push({ path: r, order: 2, args: ["--ro-bind-try", r, r] });
  for (const w of [policy.workdir, ...policy.writable].map(real)) mounts.push({ path: w, order: 3, args: ["--bind-try", w, w] });
  mounts.sort((a, b) => depth(a.path) - depth(b.path) || a.order - b.order);
  // A tmpfs remounted read-only before what is bound inside it would refuse the mount points: remounts go last, innermost first.
  const remounts: string[][] = [];
  for (const m of mounts) {
    const at = m.args.indexOf("--remount-ro");
    if (at >= 0) {
      out.push(...m.args.slice(0, at));
      remounts.unshift(m.args.slice(at));
    } else out.push(...m.args);
  }
  for (const r of remounts) out.push(...r);
  out.push("--chdir", real(policy.workdir), "--", file, ...args);
  return out;
}

/** No sandbox: the command runs as it is, as the user (docs/implement.md#safety says what that leaves open). */
const NONE: Sandbox = { kind: "none", wrap: (file, args) => ({ file, args: [...args] }) };

/** Whether this process has said that `auto` runs the agent unsandboxed. */
let warnedAuto = false;

/** The probe's answer, once per process and bwrap path: bubblewrap either works here or it does not. */
const probes = new Map<string, string | undefined>();

/** Runs bubblewrap once with the namespaces dissent asks for; undefined when it works, else its complaint. */
function probe(bwrap: string): string | undefined {
  if (probes.has(bwrap)) return probes.get(bwrap);
  const dir = real(tmpdir());
  const args = bubblewrapArgs({ workdir: dir, writable: [], readable: [], hidden: [], network: true }, "/bin/sh", ["-c", "exit 0"]);
  const r = spawnSync(bwrap, args, { encoding: "utf8", timeout: 10_000, stdio: ["ignore", "ignore", "pipe"] });
  const complaint =
    r.status === 0 ? undefined : (r.stderr?.trim().split("\n").at(-1) ?? r.error?.message ?? `exit ${r.status ?? r.signal}`) || `exit ${r.status ?? r.signal}`;
  probes.set(bwrap, complaint);
  return complaint;
}

/**
 * The sandbox `implement.sandbox` asks for (docs/implement.md#safety): `bubblewrap` (an error if
 * bwrap is missing or cannot make its namespaces here), `none`, or `auto` — bubblewrap where it
 * works, else none with one warning naming the risk.
 */
export function openSandbox(setting: SandboxSetting, warn: (message: string) => void, env: Record<string, string | undefined> = process.env): Sandbox {
  if (setting === "none") return NONE;
  const bwrap = onPath("bwrap", env.PATH ?? "");
  const trouble = bwrap ? probe(bwrap) : "bwrap is not installed (Debian: apt-get install bubblewrap)";
  if (bwrap && trouble === undefined) {
    return { kind: "bubblewrap", wrap: (file, args, policy) => ({ file: bwrap, args: bubblewrapArgs(policy, file, args) }) };
  }
  if (setting === "bubblewrap") {
    throw new ConfigError(`implement.sandbox is bubblewrap but it cannot run here: ${trouble} (docs/implement.md#safety)`);
  }
  if (warnedAuto) return NONE;
  warnedAuto = true; // once per process: a factory implements many issues
  warn(
    `implement.sandbox is auto and bubblewrap cannot run here (${trouble}): the coding agent runs unsandboxed, as your user — it can read dissent's environment (provider keys, tokens) through /proc and write anywhere you can; install bubblewrap, or set implement.sandbox: none to accept this (docs/implement.md#safety)`,
  );
  return NONE;
}
