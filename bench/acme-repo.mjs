// A realistic repository for the code-context bench (issue 30): "acme-app", the B2B web application of
// bench/cost.mjs's project description — a TypeScript API with one module per area the ten bench
// issues touch (the HTTP client's retries, reports, accounts, sessions, settings, search, contacts,
// webhooks, profiles) and 140 more modules around them (routes, jobs, models, helpers) — 160 files in
// all, committed with git, and a 48 KB ARCHITECTURE.md of the kind teams keep beside such code.
// Deterministic: the same files, the same commit, every run.
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

/** The areas the bench issues are about: a module each, with what a real one holds. */
const AREAS = {
  "src/http/client.ts": `import { withRetry } from "./retry.js";

export type Hook = (req: Request) => Request;

/** The API's outbound HTTP client: partners' APIs and webhooks go through it. */
export class HttpClient {
  private hooks: Hook[] = [];
  constructor(private readonly base: string, private readonly attempts = 3) {}

  /** Adds a hook run before each request is sent (again on every retry). */
  beforeRequest(hook: Hook): void {
    this.hooks.push(hook);
  }

  async send(path: string, init: RequestInit = {}): Promise<Response> {
    return withRetry(async () => {
      let req = new Request(this.base + path, init);
      for (const h of this.hooks) req = h(req);
      const res = await fetch(req);
      if (res.status >= 500) throw new RetryableError(res.status);
      return res;
    }, { attempts: this.attempts, backoffMs: 200 });
  }
}

export class RetryableError extends Error {
  constructor(readonly status: number) {
    super(\`upstream returned \${status}\`);
  }
}
`,
  "src/http/retry.ts": `import { sleep } from "../util/time.js";

export interface RetryOptions {
  attempts: number;
  backoffMs: number;
}

/** Runs \`attempt\` up to \`opts.attempts\` times with linear backoff; rethrows the last error. */
export async function withRetry<T>(attempt: (n: number) => Promise<T>, opts: RetryOptions): Promise<T> {
  let last: unknown;
  for (let n = 1; n <= opts.attempts; n++) {
    try {
      return await attempt(n);
    } catch (e) {
      last = e;
      await sleep(opts.backoffMs * n);
    }
  }
  throw last;
}
`,
  "src/reports/export.ts": `import { db } from "../db/pool.js";
import { toCsvRow } from "../util/csv.js";

/** The rows of one report, in pages of 500, for the reports page and its downloads. */
export async function reportRows(reportId: string, page: number): Promise<string[][]> {
  const rows = await db.query("SELECT * FROM report_rows WHERE report_id = $1 ORDER BY id LIMIT 500 OFFSET $2", [reportId, page * 500]);
  return rows.map((r: Record<string, unknown>) => Object.values(r).map(String));
}

export function renderCsv(rows: string[][]): string {
  return rows.map(toCsvRow).join("\\n");
}
`,
  "src/util/csv.ts": `/** One CSV row: fields quoted when they hold a comma, a quote or a newline. */
export function toCsvRow(fields: string[]): string {
  return fields.map((f) => (/[",\\n]/.test(f) ? \`"\${f.replace(/"/g, '""')}"\` : f)).join(",");
}
`,
  "src/accounts/delete.ts": `import { db } from "../db/pool.js";
import { audit } from "../audit/log.js";

/** Deletes an account's rows; the caller checks the user may. Billing keeps invoices for 7 years. */
export async function deleteAccount(accountId: string): Promise<void> {
  await db.query("DELETE FROM sessions WHERE account_id = $1", [accountId]);
  await db.query("DELETE FROM accounts WHERE id = $1", [accountId]);
  await audit("account.deleted", { accountId });
}
`,
  "src/sessions/store.ts": `/** Sessions, in memory: lost on restart, not shared between the three app servers. */
const sessions = new Map<string, { accountId: string; expires: number }>();

export function getSession(id: string) {
  const s = sessions.get(id);
  return s && s.expires > Date.now() ? s : undefined;
}

export function putSession(id: string, accountId: string, ttlMs: number): void {
  sessions.set(id, { accountId, expires: Date.now() + ttlMs });
}
`,
  "src/settings/theme.ts": `export type Theme = "light" | "dark" | "system";

export function themeOf(prefs: Record<string, string>): Theme {
  return prefs.theme === "dark" || prefs.theme === "light" ? prefs.theme : "system";
}
`,
  "src/search/api.ts": `import { db } from "../db/pool.js";

/** GET /api/search: the public search API (about 300 customers call it). No limit on how often. */
export async function search(query: string, apiKey: string): Promise<unknown[]> {
  return db.query("SELECT * FROM search_index WHERE doc @@ plainto_tsquery($1) LIMIT 50", [query]);
}
`,
  "src/contacts/import.ts": `import { HttpClient } from "../http/client.js";

const sheets = new HttpClient("https://sheets.googleapis.com");

/** Contacts from a CSV upload; one row a contact: name, email, phone. */
export async function importContacts(rows: string[][], accountId: string): Promise<number> {
  let n = 0;
  for (const [name, email] of rows) if (email?.includes("@")) n++;
  return n;
}
`,
  "src/webhooks/deliver.ts": `import { HttpClient } from "../http/client.js";
import { db } from "../db/pool.js";

/** Sends each pending delivery once; marks it sent after the endpoint answers. */
export async function deliverPending(client: HttpClient): Promise<void> {
  const pending = await db.query("SELECT * FROM webhook_deliveries WHERE sent_at IS NULL");
  for (const d of pending) {
    await client.send(d.url, { method: "POST", body: d.payload });
    await db.query("UPDATE webhook_deliveries SET sent_at = now() WHERE id = $1", [d.id]);
  }
}
`,
  "src/profile/view.ts": `import { db } from "../db/pool.js";

export async function profileView(accountId: string) {
  const [row] = await db.query("SELECT name, email FROM accounts WHERE id = $1", [accountId]);
  return row;
}
`,
  "src/db/pool.ts": `export const db = {
  async query(sql: string, params: unknown[] = []): Promise<any[]> {
    void sql;
    void params;
    return [];
  },
};
`,
  "src/audit/log.ts": `export async function audit(event: string, data: Record<string, unknown>): Promise<void> {
  console.log(JSON.stringify({ event, ...data }));
}
`,
  "src/util/time.ts": "export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));\n",
  "package.json": '{\n  "name": "acme-app",\n  "private": true,\n  "type": "module"\n}\n',
  "README.md": "# acme-app\n\nThe API and the nightly jobs. See ARCHITECTURE.md.\n",
};

const WORDS = [
  "invoice",
  "partner",
  "ledger",
  "quota",
  "tenant",
  "badge",
  "digest",
  "ticket",
  "shipment",
  "coupon",
  "survey",
  "upload",
  "banner",
  "catalog",
  "widget",
  "forecast",
  "payout",
  "referral",
  "license",
  "alert",
];
const KINDS = ["routes", "jobs", "models", "services", "views", "helpers", "queries"];

/** 146 modules around the areas: a route, job, model… per topic, each with a few functions that call the db or a helper. */
function filler() {
  const out = {};
  let k = 0;
  for (const kind of KINDS)
    for (const w of WORDS) {
      if (k >= 146) return out;
      const name = `${w}${kind[0].toUpperCase()}${kind.slice(1, -1)}`;
      out[`src/${kind}/${w}.ts`] = [
        `import { db } from "../db/pool.js";`,
        "",
        `/** ${kind.slice(0, -1)} for ${w}s: lists, loads and saves them for the tenant. */`,
        `export async function list${name}(tenant: string): Promise<unknown[]> {`,
        `  return db.query("SELECT * FROM ${w}s WHERE tenant = $1", [tenant]);`,
        "}",
        "",
        `export async function save${name}(tenant: string, value: Record<string, unknown>): Promise<void> {`,
        `  await db.query("INSERT INTO ${w}s (tenant, body) VALUES ($1, $2)", [tenant, JSON.stringify(value)]);`,
        "}",
        "",
      ].join("\n");
      k++;
    }
  return out;
}

const TOPIC_SECTIONS = [
  [
    "Outbound HTTP",
    "Every call to a partner's API goes through `HttpClient` (src/http/client.ts). It retries a request that fails with a 5xx status three times with linear backoff (`withRetry`, src/http/retry.ts); hooks added with `beforeRequest` run again on every attempt, so a hook that signs a request signs each retry. A 4xx is never retried. Timeouts are the platform's default.",
  ],
  [
    "Reports",
    "Reports are read in pages of 500 rows (`reportRows`). The reports page renders a page at a time; nothing streams a whole report today. CSV is written by `toCsvRow` (src/util/csv.ts), which quotes fields holding a comma, a quote or a newline.",
  ],
  [
    "Accounts and deletion",
    "Deleting an account removes its sessions and its row (`deleteAccount`, src/accounts/delete.ts) and writes an audit event. Billing must keep invoices for seven years: an account's invoices are never deleted with it. Support can restore an account within 30 days from the nightly backup only.",
  ],
  [
    "Sessions",
    "Sessions live in memory in each app server (src/sessions/store.ts): a restart signs everyone out, and the three servers do not share them — the load balancer's sticky sessions hide that. Redis 7 is already deployed for caching and queues.",
  ],
  ["Settings and themes", "User preferences are a flat key-value map; `themeOf` reads the theme (light, dark or system)."],
  ["Public search API", "GET /api/search (src/search/api.ts) answers about 300 customers' integrations; it has no rate limit. API keys identify the customer."],
  [
    "Contacts",
    "Contacts are imported from a CSV upload (`importContacts`); rows without an email are skipped. A Google Sheets client exists for the partner sync only.",
  ],
  [
    "Webhooks",
    "Webhook deliveries are sent by the nightly worker pool (`deliverPending`, src/webhooks/deliver.ts): a delivery is marked sent after the endpoint answers, so a worker that dies between the two sends it again on the next run. Two workers can pick the same pending row: nothing locks it.",
  ],
  ["Profiles", "The profile page shows the name and email (`profileView`). Logins are recorded in the audit log, not on the account row."],
];

const FILLER_SECTIONS = [
  "Logging",
  "Deploys",
  "On-call",
  "Feature flags",
  "Migrations",
  "Batch jobs",
  "Caching",
  "Queues",
  "Monitoring",
  "Backups",
  "Security reviews",
  "Dependencies",
  "Code review",
  "Testing",
  "Local development",
  "Release notes",
];

/** ARCHITECTURE.md: a section per area the issues touch, and the long rest a real one has — 48 KB. */
function architecture() {
  const parts = ["# acme-app architecture", "", "How the API, the front end and the nightly jobs fit together. Read the section for the part you change.", ""];
  for (const [h, text] of TOPIC_SECTIONS) parts.push(`## ${h}`, "", text, "");
  for (let i = 0; parts.join("\n").length < 48 * 1024; i++) {
    const h = FILLER_SECTIONS[i % FILLER_SECTIONS.length];
    parts.push(
      `## ${h}${i >= FILLER_SECTIONS.length ? ` (${Math.floor(i / FILLER_SECTIONS.length) + 1})` : ""}`,
      "",
      `${h} follow the team's usual practice: the runbook in the wiki is the reference, changes go through review, and the owner of the area signs off. We keep the process light, write down what surprised us after an incident, and revisit the section every quarter. Questions go to the platform channel; the on-call engineer of the week answers within a working day.`,
      "",
      `- Keep ${h.toLowerCase()} boring: prefer the tools we already run over new ones.`,
      `- Every change to ${h.toLowerCase()} names its rollback.`,
      `- Dashboards for ${h.toLowerCase()} live in the monitoring folder of the shared space.`,
      "",
    );
  }
  return parts.join("\n").slice(0, 48 * 1024);
}

const GIT_ENV = {
  PATH: process.env.PATH ?? "",
  GIT_AUTHOR_NAME: "acme",
  GIT_AUTHOR_EMAIL: "dev@acme.test",
  GIT_COMMITTER_NAME: "acme",
  GIT_COMMITTER_EMAIL: "dev@acme.test",
  GIT_AUTHOR_DATE: "2026-11-01T00:00:00Z",
  GIT_COMMITTER_DATE: "2026-11-01T00:00:00Z",
  GIT_CONFIG_NOSYSTEM: "1",
  HOME: "/nonexistent",
};

/** Writes the repository into `dir/acme-app` (committed) and the context file as `dir/ARCHITECTURE.md`; returns their paths. */
export function writeAcme(dir) {
  const root = join(dir, "acme-app");
  const files = { ...AREAS, ...filler() };
  for (const [p, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, p)), { recursive: true });
    writeFileSync(join(root, p), text);
  }
  const git = (...args) => execFileSync("git", args, { cwd: root, env: GIT_ENV, stdio: "ignore" });
  git("init", "-q", "-b", "main");
  git("add", "-A");
  git("commit", "-q", "-m", "acme-app");
  const doc = join(dir, "ARCHITECTURE.md");
  writeFileSync(doc, architecture());
  return { root, doc, files: Object.keys(files).length };
}
