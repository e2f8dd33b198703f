// The GitHub Action's steps (action.yml, docs/github-action.md): `node scripts/action.mjs <step>`, run by
// the composite action's bash steps from the action's own folder. Node built-ins only (the first steps
// run before anything is installed). Every value comes from the environment the step sets; outputs go
// to $GITHUB_OUTPUT, the job's summary to $GITHUB_STEP_SUMMARY, problems to the log as one line each.
//
//   setup         the command and the issue, from the inputs or the event; the key of the install cache
//   install       npm ci and the build in the action's folder, unless the cache restored them
//   wiki-restore  the wiki branch's entries into the dissent home (known gaps from earlier issues)
//   run           the dissent command, its status, plan-url and result-file outputs, and the step summary
//   wiki-save     the entries this run wrote, committed to the wiki branch (retried on a race)
import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { appendFileSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, closeSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";

const env = process.env;
const ACTION = env.ACTION_PATH || join(import.meta.dirname, "..");
const TEMP = env.RUNNER_TEMP || "/tmp";

/** The command each event runs when the `command` input is empty. */
const EVENT_COMMANDS = {
  issue_comment: () => "comment",
  issues: (event) => (event?.action === "closed" ? "merged" : "plan"),
  pull_request: () => "review",
};
const COMMANDS = ["plan", "implement", "comment", "merged", "review", "audit"];
/** The most bytes of a prompt the audit command reads: what `dissent run` accepts (docs/limits.md). */
const MAX_PROMPT_BYTES = 1024 * 1024;

/** One line on stderr, prefixed as dissent's own; the Action's log shows it. */
const say = (line) => process.stderr.write(`dissent: ${line}\n`);
/** A usage error of the step: one line, exit 2 (docs/errors.md). */
function fail(line) {
  process.stderr.write(`dissent: error: ${line}\n`);
  process.exit(2);
}

/** Appends `name=value` lines to $GITHUB_OUTPUT (single-line values: newlines cannot forge another output). */
function output(values) {
  const file = env.GITHUB_OUTPUT;
  if (!file) return;
  appendFileSync(
    file,
    Object.entries(values)
      .map(([k, v]) => `${k}=${String(v ?? "").replace(/[\r\n]+/g, " ")}\n`)
      .join(""),
  );
}

/** Reads at most `max` bytes of a regular file; undefined when it is missing. */
function readCapped(path, max) {
  if (!path || !existsSync(path) || !statSync(path).isFile()) return undefined;
  const fd = openSync(path, "r");
  try {
    const buf = Buffer.alloc(Math.min(statSync(path).size, max));
    const n = readSync(fd, buf, 0, buf.length, 0);
    return buf.subarray(0, n).toString("utf8");
  } finally {
    closeSync(fd);
  }
}

/** The event payload ($GITHUB_EVENT_PATH), at most 1 MiB; undefined when there is none or it is not JSON. */
function eventPayload() {
  try {
    const text = readCapped(env.GITHUB_EVENT_PATH, 1024 * 1024);
    return text === undefined ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
}

// ------------------------------------------------------------------ setup
/** Adds every file under `dir`, name and bytes, in a fixed order, to `hash`: what the build reads. */
function treeHash(hash, dir) {
  if (!existsSync(dir)) return;
  for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const p = join(dir, e.name);
    if (e.isDirectory()) treeHash(hash, p);
    else if (e.isFile())
      hash
        .update(`${relative(ACTION, p)}\0`)
        .update(readFileSync(p))
        .update("\0");
  }
}

function setup() {
  const event = eventPayload();
  const name = env.GITHUB_EVENT_NAME ?? "";
  let command = env.INPUT_COMMAND ?? "";
  if (!command) {
    const pick = EVENT_COMMANDS[name];
    if (!pick) fail(`give the command input (${COMMANDS.join(", ")}) for a ${name || "manual"} event`);
    command = pick(event);
  }
  if (!COMMANDS.includes(command)) fail(`command must be ${COMMANDS.slice(0, -1).join(", ")} or ${COMMANDS.at(-1)}, not '${command}'`);
  // audit gates a prompt, not an issue: it needs the prompt instead, and keeps one home (its reply cache) for every run.
  const issue = command === "audit" ? "" : env.INPUT_ISSUE || String(event?.issue?.number ?? event?.pull_request?.number ?? "");
  if (command === "audit") {
    if (!env.INPUT_PROMPT && !env.INPUT_PROMPT_FILE) fail("command audit needs the prompt input or the prompt-file input");
    if (env.INPUT_PROMPT && env.INPUT_PROMPT_FILE) fail("give the prompt input or the prompt-file input, not both");
  } else if (!/^[1-9][0-9]{0,9}$/.test(issue))
    fail(`no ${command === "review" ? "pull request" : "issue"} number: give the issue input, or run on an issues, issue_comment or pull_request event`);
  if ((command === "comment" || command === "merged") && !env.GITHUB_EVENT_PATH)
    fail(`command ${command} reads the event payload, and this run has none ($GITHUB_EVENT_PATH)`);

  // The install cache's key: the Node major (better-sqlite3 is native), the lockfile, and what the build reads.
  const lock = createHash("sha256")
    .update(readFileSync(join(ACTION, "package-lock.json")))
    .digest("hex")
    .slice(0, 16);
  const src = createHash("sha256");
  for (const f of ["package.json", "tsconfig.json", "tsconfig.build.json", "tsconfig.web.json"])
    if (existsSync(join(ACTION, f))) src.update(`${f}\0`).update(readFileSync(join(ACTION, f)));
  for (const d of ["src", "scripts"]) treeHash(src, join(ACTION, d));
  const node = process.versions.node.split(".")[0];
  output({ command, issue, "home-key": issue || command, "deps-key": `node${node}-${lock}-${src.digest("hex").slice(0, 16)}` });
}

// ------------------------------------------------------------------ install
function install() {
  const bin = join(ACTION, "dist", "cli", "bin.js");
  const installed = existsSync(bin) && existsSync(join(ACTION, "node_modules", ".package-lock.json"));
  if (env.CACHE_HIT === "true" && installed) {
    say(`using the install cached for this version (${ACTION})`);
  } else {
    // In the action's own folder, from its lockfile: `npm ci` builds (prepare), then the build tools go.
    say(`installing and building in ${ACTION} (once per version: the result is cached)`);
    const npm = (args) => execFileSync("npm", args, { cwd: ACTION, stdio: ["ignore", "inherit", "inherit"] });
    npm(["ci", "--no-audit", "--no-fund"]);
    npm(["prune", "--omit=dev", "--no-audit", "--no-fund"]);
    if (!existsSync(bin)) fail(`the build left no ${bin}`);
  }
  const version = execFileSync(process.execPath, [bin, "--version"], { encoding: "utf8" }).trim();
  say(`dissent ${version} from ${ACTION}`);
  output({ bin, version });
}

// ------------------------------------------------------------------ the wiki branch
const WIKI = () => join(env.DISSENT_HOME, "wiki");
const GIT_DIR = () => join(TEMP, "dissent-wiki.git");
const RESTORED = () => join(TEMP, "dissent-wiki-restored.json");
/** A wiki entry is read up to this size, as the store reads one. */
const MAX_ENTRY_BYTES = 1024 * 1024;
/** Entries live under wiki/ in the branch, beside a README for the people who browse it. */
const BRANCH_DIR = "wiki";
const README = `# dissent's wiki

Known gaps: concerns dissent's councils raised that shipped unresolved in a merged pull request
(CRITICAL and HIGH ones). The GitHub Action keeps them here, one file per gap under \`wiki/\`, and
shows the relevant ones to the councils of every later issue. Edit an entry, or mark it
\`stale: true\` in its front matter, and commit: the next run reads what is here.
`;

/** The repository's git address and the environment that authenticates to it (the token as a header, never in a URL or argument). */
function remote() {
  const server = (env.GITHUB_SERVER_URL || "https://github.com").replace(/\/+$/, "");
  const url = `${server}/${env.GITHUB_REPOSITORY}`;
  const gitEnv = { ...env, GIT_TERMINAL_PROMPT: "0", GIT_DIR: GIT_DIR() };
  if (env.GITHUB_TOKEN && /^https?:/.test(server)) {
    const basic = Buffer.from(`x-access-token:${env.GITHUB_TOKEN}`).toString("base64");
    if (env.GITHUB_ACTIONS === "true") process.stdout.write(`::add-mask::${basic}\n`);
    Object.assign(gitEnv, { GIT_CONFIG_COUNT: "1", GIT_CONFIG_KEY_0: `http.${server}/.extraheader`, GIT_CONFIG_VALUE_0: `AUTHORIZATION: basic ${basic}` });
  }
  return { url, gitEnv };
}

function git(args, gitEnv, input) {
  const r = spawnSync("git", args, { env: gitEnv, encoding: "utf8", input, maxBuffer: 64 * 1024 * 1024 });
  return { ok: r.status === 0, raw: r.stdout ?? "", out: (r.stdout ?? "").trim(), err: (r.stderr ?? "").trim() };
}

/** Fetches the branch; its commit, or null when the branch does not exist yet. Anything else fails the step. */
function fetchBranch(branch, { url, gitEnv }) {
  const r = git(["fetch", "--quiet", "--depth=1", "--no-tags", url, `+refs/heads/${branch}:refs/remotes/origin/${branch}`], gitEnv);
  if (r.ok) return git(["rev-parse", `refs/remotes/origin/${branch}`], gitEnv).out;
  if (/couldn't find remote ref|not our ref|no such ref/i.test(r.err)) return null;
  fail(`cannot fetch the wiki branch ${branch} of ${env.GITHUB_REPOSITORY}: ${r.err.split("\n").at(-1)} (the wiki-branch input; '' turns it off)`);
}

/** The entries of a commit's wiki/ folder: name → blob id. */
function entriesOf(commit, gitEnv) {
  if (!commit) return {};
  const listing = git(["ls-tree", commit, `${BRANCH_DIR}/`], gitEnv).out;
  const out = {};
  for (const line of listing.split("\n").filter(Boolean)) {
    const m = /^\d+ blob ([0-9a-f]+)\t(.+)$/.exec(line);
    const name = m?.[2]?.slice(BRANCH_DIR.length + 1);
    if (m && name && /^[\w.-]+\.md$/.test(name)) out[name] = m[1];
  }
  return out;
}

function wikiRestore() {
  const branch = env.INPUT_WIKI_BRANCH;
  if (!branch) return;
  if (!/^[\w./-]{1,200}$/.test(branch) || branch.includes("..")) fail(`wiki-branch must be a branch name, not '${branch}'`);
  const r = remote();
  git(["init", "--quiet", "--bare", GIT_DIR()], r.gitEnv);
  const commit = fetchBranch(branch, r);
  const entries = entriesOf(commit, r.gitEnv);
  mkdirSync(WIKI(), { recursive: true });
  for (const [name, blob] of Object.entries(entries)) {
    // An entry is read up to 1 MiB, as the store reads one (docs/limits.md): a larger file stays in the branch, unread.
    if (Number(git(["cat-file", "-s", blob], r.gitEnv).out) > MAX_ENTRY_BYTES) {
      say(`wiki: skipping ${BRANCH_DIR}/${name} of ${branch}: over ${MAX_ENTRY_BYTES} bytes`);
      delete entries[name];
      continue;
    }
    writeFileSync(join(WIKI(), name), git(["cat-file", "blob", blob], r.gitEnv).raw);
  }
  writeFileSync(RESTORED(), JSON.stringify({ branch, commit, entries }));
  say(
    commit ? `wiki: ${Object.keys(entries).length} known gap${Object.keys(entries).length === 1 ? "" : "s"} from ${branch}` : `wiki: no branch ${branch} yet`,
  );
}

function wikiSave() {
  const branch = env.INPUT_WIKI_BRANCH;
  const restored = existsSync(RESTORED()) ? JSON.parse(readFileSync(RESTORED(), "utf8")) : undefined;
  if (!branch || !restored) return;
  const r = remote();
  // What this run wrote: entries new or changed since the restore (dissent never deletes one).
  const changed = {};
  for (const name of existsSync(WIKI()) ? readdirSync(WIKI()) : []) {
    if (!/^[\w.-]+\.md$/.test(name)) continue;
    const blob = git(["hash-object", "-w", join(WIKI(), name)], r.gitEnv).out;
    if (restored.entries[name] !== blob) changed[name] = blob;
  }
  const names = Object.keys(changed);
  if (!names.length) return say("wiki: nothing new to save");
  const who = { GIT_AUTHOR_NAME: "github-actions[bot]", GIT_AUTHOR_EMAIL: "41898282+github-actions[bot]@users.noreply.github.com" };
  const commitEnv = { ...r.gitEnv, ...who, GIT_COMMITTER_NAME: who.GIT_AUTHOR_NAME, GIT_COMMITTER_EMAIL: who.GIT_AUTHOR_EMAIL };
  let parent = restored.commit;
  for (let attempt = 1; attempt <= 4; attempt++) {
    // The parent's tree with this run's entries over it: another run's entries stay, a same-named one is replaced.
    const index = { ...commitEnv, GIT_INDEX_FILE: join(TEMP, `dissent-wiki-index-${attempt}`) };
    if (parent) git(["read-tree", parent], index);
    else git(["read-tree", "--empty"], index);
    if (!parent) git(["update-index", "--add", "--cacheinfo", `100644,${git(["hash-object", "-w", "--stdin"], r.gitEnv, README).out},README.md`], index);
    for (const name of names) git(["update-index", "--add", "--cacheinfo", `100644,${changed[name]},${BRANCH_DIR}/${name}`], index);
    const tree = git(["write-tree"], index).out;
    const message = `dissent: ${names.length} known gap${names.length === 1 ? "" : "s"} (${names.join(", ")})${env.GITHUB_RUN_ID ? `\n\nRun ${env.GITHUB_RUN_ID}.` : ""}`;
    const commit = git(["commit-tree", tree, ...(parent ? ["-p", parent] : []), "-m", message], commitEnv).out;
    const pushed = git(["push", "--quiet", r.url, `${commit}:refs/heads/${branch}`], r.gitEnv);
    if (pushed.ok) return say(`wiki: saved ${names.join(", ")} to ${branch}`);
    if (!/rejected|non-fast-forward|fetch first|stale info|cannot lock ref/i.test(pushed.err))
      fail(
        `cannot push the wiki branch ${branch}: ${pushed.err.split("\n").at(-1)} (the job needs permissions: contents: write; wiki-branch: '' turns the wiki off)`,
      );
    parent = fetchBranch(branch, r); // another run saved meanwhile: build on its commit and try again
  }
  fail(`cannot save the wiki branch ${branch}: it kept moving under four attempts; the entries are in this run's log above`);
}

// ------------------------------------------------------------------ run
/** Markdown-safe one-line text for the step summary (the summary renders markdown). */
const md = (s) =>
  String(s ?? "")
    .replace(/[\r\n]+/g, " ")
    .replace(/[|<>[\]\\`*_]/g, (c) => `\\${c}`)
    .slice(0, 500);

/** The audit command's prompt: the input's text, or the file's (relative to the workspace), bounded as `dissent run` bounds it. */
function auditPrompt() {
  if (env.PROMPT) return env.PROMPT;
  const path = join(env.GITHUB_WORKSPACE || process.cwd(), env.PROMPT_FILE ?? "");
  if (!existsSync(path) || !statSync(path).isFile()) fail(`prompt-file ${env.PROMPT_FILE}: no such file in the workspace (check the repository out first)`);
  if (statSync(path).size > MAX_PROMPT_BYTES) fail(`prompt-file ${env.PROMPT_FILE} is larger than ${MAX_PROMPT_BYTES / 1024} KiB, the limit`);
  return readCapped(path, MAX_PROMPT_BYTES);
}

/** Events whose workspace is the pull request's own code (its merge commit): its configuration is not trusted. */
const PULL_EVENTS = new Set(["pull_request", "pull_request_target"]);
/** The config input's default: `.dissent.yaml` is read when it is left as is and only that file exists. */
const DEFAULT_CONFIG = "dissent.config.yaml";
const ALT_CONFIG = ".dissent.yaml";

/** The config file, relative to the workspace: the input's, or `.dissent.yaml` when the input is the default and only that exists. */
function configPath() {
  const named = env.DISSENT_CONFIG || DEFAULT_CONFIG;
  const ws = env.GITHUB_WORKSPACE || process.cwd();
  if (named === DEFAULT_CONFIG && !existsSync(join(ws, named)) && existsSync(join(ws, ALT_CONFIG))) return ALT_CONFIG;
  return named;
}

/**
 * The config file as the pull request's base branch has it, written beside the workspace's (so the
 * paths in it mean what they mean on the base branch) under a name the pull request cannot choose.
 * The pull request may change the config; its review never reads that change.
 */
function baseConfig(named) {
  const event = eventPayload();
  const base = event?.pull_request?.base?.ref;
  if (typeof base !== "string" || !/^[\w./-]{1,200}$/.test(base) || base.includes("..")) fail("the pull_request event names no base branch");
  if (named.startsWith("/") || named.split(/[\\/]/).includes("..")) fail(`config ${named}: on a pull request the config is a path in the repository`);
  const r = remote();
  git(["init", "--quiet", "--bare", GIT_DIR()], r.gitEnv);
  const f = git(["fetch", "--quiet", "--depth=1", "--no-tags", r.url, `+refs/heads/${base}:refs/remotes/origin/${base}`], r.gitEnv);
  if (!f.ok) fail(`cannot fetch the base branch ${base} of ${env.GITHUB_REPOSITORY} to read its config: ${f.err.split("\n").at(-1)}`);
  const tryPath = (p) => git(["show", `refs/remotes/origin/${base}:${p}`], r.gitEnv);
  let path = named;
  let shown = tryPath(path);
  if (!shown.ok && named === DEFAULT_CONFIG) shown = tryPath((path = ALT_CONFIG));
  if (!shown.ok) fail(`the base branch ${base} has no ${named}: a pull request is reviewed with its base branch's config, never its own (the config input)`);
  if (shown.raw.length > 1024 * 1024) fail(`${path} on ${base} is larger than 1 MiB`);
  const ws = env.GITHUB_WORKSPACE || process.cwd();
  const at = join(
    ws,
    path.includes("/") ? path.slice(0, path.lastIndexOf("/")) : "",
    `.dissent-base-${createHash("sha256").update(base).digest("hex").slice(0, 8)}.yaml`,
  );
  mkdirSync(join(at, ".."), { recursive: true });
  writeFileSync(at, shown.raw);
  say(`config: ${path} as the base branch ${base} has it (the pull request's own is not read)`);
  return at;
}

function run() {
  const command = env.COMMAND;
  const issue = env.ISSUE;
  const args = {
    comment: ["github", "comment", "--event", env.GITHUB_EVENT_PATH ?? ""],
    merged: ["github", "closed", "--event", env.GITHUB_EVENT_PATH ?? ""],
    plan: ["issue", "plan", issue],
    implement: ["issue", "implement", issue],
    review: ["pr", "review", issue],
    audit: ["run", "--audit"],
  }[command];
  if (!args) fail(`command must be one of ${COMMANDS.join(", ")}, not '${command}'`);
  // The gate reads its prompt on stdin (no argument-length limit, nothing of it in the process list); --fail-on as given, checked by dissent.
  let input;
  if (command === "audit") {
    input = auditPrompt();
    if (env.FAIL_ON) args.push("--fail-on", env.FAIL_ON);
  }
  const childEnv = { ...env, DISSENT_CONFIG: configPath() };
  // A pull request's review reads the configuration of its base branch, never its head's (docs/github-action.md).
  if (command === "review" && PULL_EVENTS.has(env.GITHUB_EVENT_NAME ?? "")) childEnv.DISSENT_CONFIG = baseConfig(childEnv.DISSENT_CONFIG);
  for (const k of ["OPENAI_API_KEY", "ANTHROPIC_API_KEY"]) if (!childEnv[k]) delete childEnv[k]; // an empty input is no key
  for (const k of Object.keys(childEnv)) if (k.startsWith("INPUT_")) delete childEnv[k];
  const outFile = join(TEMP, "dissent-out.json");
  const fd = openSync(outFile, "w");
  const r = spawnSync(process.execPath, [join(ACTION, "dist", "cli", "bin.js"), ...args, "--json"], {
    env: childEnv,
    stdio: [input === undefined ? "ignore" : "pipe", fd, "inherit"],
    ...(input === undefined ? {} : { input }),
  });
  closeSync(fd);
  let out;
  try {
    out = JSON.parse(readCapped(outFile, 16 * 1024 * 1024) ?? "");
  } catch {
    out = undefined;
  }
  const status = command === "audit" ? auditStatus(out) : typeof out?.status === "string" ? out.status : "failed";
  const planUrl = typeof out?.plan_url === "string" ? out.plan_url : "";
  output({ status, "plan-url": planUrl, "result-file": out ? outFile : "" });
  if (env.GITHUB_STEP_SUMMARY) appendFileSync(env.GITHUB_STEP_SUMMARY, summary(command, issue, status, planUrl, out, r.status));
  process.exit(r.status ?? (r.signal === "SIGTERM" ? 143 : 1));
}

/** The audit's status: the verdict, or challenger_failed; failed when dissent printed no result. */
function auditStatus(out) {
  const meta = out?.audit_meta;
  if (!meta) return "failed";
  if (meta.challenger_status === "failed") return "challenger_failed";
  return typeof meta.audit_verdict === "string" ? meta.audit_verdict : "failed";
}

/** The audit's summary: the verdict, what failed the step, the grounded concerns and any drift. */
function auditSummary(status, out, code) {
  const meta = out.audit_meta ?? {};
  const lines = [`### dissent audit: ${status}${code ? ` (exit ${code}: --fail-on)` : ""}`, ""];
  lines.push(`${meta.concerns ?? 0} grounded concern${meta.concerns === 1 ? "" : "s"}${meta.revised ? "; the answer was revised once" : ""}.`);
  if (meta.challenger_error) lines.push("", `The challenger failed, so the answer is unaudited: ${md(meta.challenger_error)}`);
  const concerns = Array.isArray(out.audit?.concerns) ? out.audit.concerns : [];
  if (concerns.length) {
    lines.push("", "| severity | category | evidence | concern |", "|---|---|---|---|");
    for (const c of concerns.slice(0, 20)) lines.push(`| ${md(c.severity)} | ${md(c.category)} | ${md(c.evidence)} | ${md(c.concern)} |`);
  }
  const drift = Array.isArray(meta.revision_drift) ? meta.revision_drift : [];
  if (drift.length) lines.push("", `Revision drift — facts found in nothing given: ${drift.map((d) => md(d.text)).join(", ")}`);
  return lines;
}

/** The job summary: what dissent did, and where to read it. */
function summary(command, issue, status, planUrl, out, code) {
  const plan = planUrl ? ` · [the plan](${planUrl})` : "";
  const lines = [];
  if (!out && command === "audit") lines.push("### dissent audit: failed", "", "dissent printed no result: its error is in the log above.");
  else if (!out) lines.push(`### dissent ${command} · #${issue}: failed`, "", "dissent printed no result: its error is in the log above.");
  else if (command === "audit") lines.push(...auditSummary(status, out, code >= 3 && code <= 5 ? code : 0));
  else if (command === "comment") lines.push(`### dissent · comment on #${issue}: ${status}${plan}`, "", md(out.detail));
  else if (command === "merged") lines.push(`### dissent · #${issue} closed: ${status.replace("_", " ")}`, "", md(out.detail));
  else if (command === "review") {
    lines.push(`### dissent review · pull request #${issue}: ${status}${out.check ? ` · check ${md(out.check)}` : ""}`, "");
    const findings = Array.isArray(out.findings) ? out.findings : [];
    lines.push(`${findings.length} finding${findings.length === 1 ? "" : "s"}; the review and its inline comments are on the pull request.`);
    if (findings.length) {
      lines.push("", "| finding | severity | | concern |", "|---|---|---|---|");
      for (const f of findings.slice(0, 20)) lines.push(`| ${md(f.id)} | ${md(f.severity)} | ${f.blocking ? "blocks" : "advice"} | ${md(f.concern)} |`);
    }
  } else {
    lines.push(`### dissent ${command} · #${issue}: ${status}${plan}`, "");
    const pending = Array.isArray(out.pending_concerns) ? out.pending_concerns : [];
    if (typeof out.calls === "number")
      lines.push(`${out.calls} model call${out.calls === 1 ? "" : "s"}; ${pending.length} pending concern${pending.length === 1 ? "" : "s"}.`);
    if (pending.length) {
      lines.push("", "| concern | severity | by | |", "|---|---|---|---|");
      for (const c of pending.slice(0, 20)) lines.push(`| ${md(c.id)} | ${md(c.severity)} | ${md(c.must_address_by)} | ${md(c.concern)} |`);
      if (pending.length > 20) lines.push("", `… and ${pending.length - 20} more on the issue.`);
    }
  }
  return `${lines.join("\n")}\n`;
}

// ------------------------------------------------------------------ main
const steps = { setup, install, "wiki-restore": wikiRestore, run, "wiki-save": wikiSave };
const step = steps[process.argv[2] ?? ""];
if (!step) fail(`scripts/action.mjs needs a step: ${Object.keys(steps).join(", ")}`);
step();
