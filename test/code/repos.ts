/**
 * Repositories the code-map tests build with git (issue 30): a TypeScript package and a Python one, a
 * few dozen files each, committed; files to be skipped (.gitignored, binary, vendored, generated,
 * oversized); and a small file in each parsed language. Deterministic: fixed author and dates.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

const ENV = {
  PATH: process.env.PATH ?? "",
  HOME: tmpdir(),
  GIT_AUTHOR_NAME: "Test",
  GIT_AUTHOR_EMAIL: "test@example.com",
  GIT_COMMITTER_NAME: "Test",
  GIT_COMMITTER_EMAIL: "test@example.com",
  GIT_AUTHOR_DATE: "2026-01-01T00:00:00Z",
  GIT_COMMITTER_DATE: "2026-01-01T00:00:00Z",
  GIT_CONFIG_NOSYSTEM: "1",
};

export const git = (cwd: string, ...args: string[]) => execFileSync("git", args, { cwd, env: ENV, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();

/** A folder of files written, made a git repository and committed; `remove()` deletes it. */
export interface Repo {
  root: string;
  commit: () => string;
  write(path: string, text: string | Buffer): void;
  /** Commits everything (`git add -A`). */
  commitAll(message: string): string;
  remove(): void;
}

export function makeRepo(files: Record<string, string | Buffer>, opts: { commit?: boolean } = {}): Repo {
  const root = mkdtempSync(join(tmpdir(), "dissent-codemap-"));
  const write = (path: string, text: string | Buffer) => {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  };
  for (const [p, t] of Object.entries(files)) write(p, t);
  git(root, "init", "-q", "-b", "main");
  const commitAll = (message: string) => {
    git(root, "add", "-A");
    git(root, "commit", "-q", "--allow-empty", "-m", message);
    return git(root, "rev-parse", "HEAD");
  };
  if (opts.commit !== false) commitAll("initial");
  return { root, commit: () => git(root, "rev-parse", "HEAD"), write, commitAll, remove: () => rmSync(root, { recursive: true, force: true }) };
}

/** A bare clone of a repository (the GitHub double's `gitRepo`). */
export function bareClone(repo: Repo): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), "dissent-codemap-bare-"));
  git(dir, "clone", "-q", "--bare", repo.root, join(dir, "r.git"));
  return { dir: join(dir, "r.git"), remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * "shop": a TypeScript package. The HTTP client retries through `withRetry`, whose contract (it runs
 * `beforeRequest` on every attempt) is stated in its doc comment; checkout calls the client; two dozen
 * feature modules use the formatting helpers. Names are what issues name.
 */
export function shopFiles(): Record<string, string> {
  const files: Record<string, string> = {
    "package.json": `{\n  "name": "@acme/shop",\n  "version": "1.0.0",\n  "type": "module"\n}\n`,
    "README.md": "# shop\n\nA small shop.\n\n## Retries\n\nRequests are retried three times with a backoff.\n\n## Money\n\nPrices are integers of cents.\n",
    "src/http/retry.ts": [
      'import { sleep } from "../util/time.js";',
      "",
      "export interface RetryOptions {",
      "  attempts: number;",
      "  backoffMs: number;",
      "}",
      "",
      "/**",
      " * Runs `attempt` up to `opts.attempts` times. Contract: `beforeRequest` hooks run again on every",
      " * attempt, so a hook that signs a request signs each retry anew.",
      " */",
      "export async function withRetry<T>(attempt: (n: number) => Promise<T>, opts: RetryOptions): Promise<T> {",
      "  let last: unknown;",
      "  for (let n = 1; n <= opts.attempts; n++) {",
      "    try {",
      "      return await attempt(n);",
      "    } catch (e) {",
      "      last = e;",
      "      await sleep(opts.backoffMs * n);",
      "    }",
      "  }",
      "  throw last;",
      "}",
      "",
    ].join("\n"),
    "src/http/client.ts": [
      'import { withRetry, type RetryOptions } from "./retry.js";',
      'import { signRequest } from "../auth/session.js";',
      "",
      "export type Hook = (req: Request) => Request;",
      "",
      "export class HttpClient {",
      "  private hooks: Hook[] = [];",
      "  constructor(private readonly retry: RetryOptions) {}",
      "",
      "  /** Adds a hook run before each request is sent. */",
      "  beforeRequest(hook: Hook): void {",
      "    this.hooks.push(hook);",
      "  }",
      "",
      "  async send(url: string): Promise<Response> {",
      "    return withRetry(async () => {",
      "      let req = new Request(url);",
      "      for (const h of this.hooks) req = h(req);",
      "      return fetch(signRequest(req));",
      "    }, this.retry);",
      "  }",
      "}",
      "",
    ].join("\n"),
    "src/auth/session.ts": [
      'import { readCookie } from "./cookies.js";',
      "",
      "export function signRequest(req: Request): Request {",
      '  const token = readCookie("session");',
      '  if (!token) throw new Error("no session cookie: sign in first");',
      '  req.headers.set("authorization", `Bearer ${token}`);',
      "  return req;",
      "}",
      "",
    ].join("\n"),
    "src/auth/cookies.ts": [
      "const jar = new Map<string, string>();",
      "",
      "export function readCookie(name: string): string | undefined {",
      "  return jar.get(name);",
      "}",
      "",
      "export function writeCookie(name: string, value: string): void {",
      "  jar.set(name, value);",
      "}",
      "",
    ].join("\n"),
    "src/util/time.ts": "export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));\n",
    "src/util/format.ts": [
      "export function formatCents(cents: number): string {",
      "  return `$${(cents / 100).toFixed(2)}`;",
      "}",
      "",
      "export function pad(text: string, width: number): string {",
      "  return text.padEnd(width);",
      "}",
      "",
    ].join("\n"),
    "src/checkout.ts": [
      'import { HttpClient } from "./http/client.js";',
      'import { formatCents } from "./util/format.js";',
      "",
      "const client = new HttpClient({ attempts: 3, backoffMs: 100 });",
      "",
      "export async function checkout(cartId: string, totalCents: number): Promise<string> {",
      "  const res = await client.send(`/carts/${cartId}/checkout`);",
      "  if (!res.ok) throw new Error(`checkout failed for ${formatCents(totalCents)}`);",
      "  return cartId;",
      "}",
      "",
    ].join("\n"),
    "test/checkout.test.ts": 'import { checkout } from "../src/checkout.js";\n\ncheckout("c1", 100);\n',
  };
  for (let k = 1; k <= 24; k++) {
    files[`src/features/feature${k}.ts`] = [
      'import { formatCents, pad } from "../util/format.js";',
      "",
      `export function renderFeature${k}(cents: number): string {`,
      `  return pad(formatCents(cents * ${k}), ${10 + k});`,
      "}",
      "",
      `export const FEATURE_${k}_NAME = "feature ${k}";`,
      "",
    ].join("\n");
  }
  return files;
}

/** "ledger": a Python package: accounts post to a journal; money helpers; a CSV reader; two dozen report modules. */
export function ledgerFiles(): Record<string, string> {
  const files: Record<string, string> = {
    "pyproject.toml": '[project]\nname = "ledger"\nversion = "1.0"\n',
    "ledger/__init__.py": "from .accounts import Account\n",
    "ledger/money.py": [
      "def to_cents(amount: str) -> int:",
      '    """Parses "12.34" into 1234; rejects more than two decimals."""',
      '    whole, _, frac = amount.partition(".")',
      "    if len(frac) > 2:",
      '        raise ValueError("amount has more than two decimals")',
      '    return int(whole) * 100 + int(frac.ljust(2, "0"))',
      "",
    ].join("\n"),
    "ledger/journal.py": [
      "class Journal:",
      "    def __init__(self):",
      "        self.entries = []",
      "",
      "    def post(self, account, cents):",
      "        self.entries.append((account, cents))",
      "        return len(self.entries)",
      "",
    ].join("\n"),
    "ledger/accounts.py": [
      "from .journal import Journal",
      "from .money import to_cents",
      "",
      "",
      "class Account:",
      "    def __init__(self, name, journal: Journal):",
      "        self.name = name",
      "        self.journal = journal",
      "",
      "    def deposit(self, amount):",
      "        return self.journal.post(self.name, to_cents(amount))",
      "",
    ].join("\n"),
    "ledger/io/__init__.py": "",
    "ledger/io/csv_reader.py": [
      "import csv",
      "from ledger.money import to_cents",
      "",
      "",
      "def read_rows(path):",
      "    with open(path) as f:",
      "        for row in csv.reader(f):",
      "            yield row[0], to_cents(row[1])",
      "",
    ].join("\n"),
  };
  for (let k = 1; k <= 24; k++) {
    files[`ledger/reports/report_${k}.py`] = [
      "from ledger.money import to_cents",
      "",
      "",
      `def monthly_report_${k}(rows):`,
      `    return sum(to_cents(r) for r in rows) * ${k}`,
      "",
    ].join("\n");
  }
  return files;
}

/** One small file per parsed language, each defining things and using another file's. */
export function polyglotFiles(): Record<string, string> {
  return {
    "web/app.ts": 'import { helper } from "./lib.js";\n\nexport class Widget {\n  render(): string {\n    return helper("widget");\n  }\n}\n',
    "web/lib.ts": "export function helper(name: string): string {\n  return name.toUpperCase();\n}\n",
    "web/view.tsx": 'import { Widget } from "./app.js";\n\nexport function WidgetView() {\n  return <Panel title={new Widget().render()} />;\n}\n',
    "web/legacy.js":
      'const { helper } = require("./lib");\n\nfunction legacyGreeting(name) {\n  return helper(name) + "!";\n}\nmodule.exports = { legacyGreeting };\n',
    "py/tool.py": "from py.util import normalize_name\n\n\nclass Tool:\n    def run(self, name):\n        return normalize_name(name)\n",
    "py/util.py": "def normalize_name(name):\n    return name.strip().lower()\n",
    "go/server.go":
      'package server\n\nimport "fmt"\n\ntype Server struct {\n\tName string\n}\n\nfunc (s *Server) Start() {\n\tfmt.Println(FormatName(s.Name))\n}\n',
    "go/names.go": 'package server\n\nfunc FormatName(name string) string {\n\treturn "[" + name + "]"\n}\n',
    "rs/src/lib.rs":
      "mod parse;\n\npub struct Engine {\n    pub size: usize,\n}\n\nimpl Engine {\n    pub fn run(&self) -> usize {\n        parse::parse_input(self.size)\n    }\n}\n",
    "rs/src/parse.rs": "pub fn parse_input(n: usize) -> usize {\n    n * 2\n}\n",
    "java/src/com/acme/Greeter.java":
      "package com.acme;\n\nimport com.acme.text.Formatter;\n\npublic class Greeter {\n    public String greet(String name) {\n        return Formatter.shout(name);\n    }\n}\n",
    "java/src/com/acme/text/Formatter.java":
      "package com.acme.text;\n\npublic class Formatter {\n    public static String shout(String s) {\n        return s.toUpperCase();\n    }\n}\n",
  };
}
