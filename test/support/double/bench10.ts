import type { Defect, Scenario } from "./types.js";

/** One benchmark issue: what a user files, and what is wrong in the drafts the models will write for it. */
export interface BenchIssue {
  title: string;
  body: string;
  /** What the issue exercises. */
  kind: "clean" | "trivial" | "critical-in-plan" | "corroborated-high" | "human-question" | "high-in-discover" | "minor-only";
  defects: readonly Defect[];
}

/** A scenario (pass it as `scenario`) that also lists its issues in order, to file and plan them. */
export interface Bench extends Scenario {
  list: readonly BenchIssue[];
}

const list: BenchIssue[] = [
  {
    title: "Retry 503s in the HTTP client",
    body: "Our HTTP client gives up on the first 503 Service Unavailable from the upstream API, so a brief blip during their deploys fails whole batch jobs. We see about 40 such failures a week in the nightly sync logs, and every one succeeds when re-run by hand.",
    kind: "critical-in-plan",
    defects: [
      {
        id: "R503-PLAN-1",
        stage: "plan",
        line: "Retry every failed request \u2013 POSTs included \u2013 up to 5 times with no delay between attempts.",
        fix: "Retry only idempotent requests (GET, HEAD, PUT, DELETE) on 503, at most 3 times with exponential backoff that honours Retry-After.",
        lanes: ["plan.risk_skeptic", "plan.builder"],
        severity: "CRITICAL",
        category: "correctness",
        wordings: [
          "Retrying non-idempotent POSTs can duplicate writes on the upstream API.",
          "Blind retries of POST requests risk creating the same record twice upstream.",
          "The retry policy does not tell idempotent from non-idempotent requests, so writes may be duplicated.",
        ],
      },
      {
        id: "R503-PLAN-2",
        stage: "plan",
        line: "Check the retry behaviour by hand against the staging API.",
        fix: "Add a test with a local stub server that answers 503 twice and then 200, asserting three attempts and the backoff delays.",
        lanes: ["plan.tester"],
        severity: "MEDIUM",
        category: "test_strategy",
        wordings: [
          "A manual check against staging will not catch regressions in the retry logic.",
          "The retry path needs an automated test with a stub server, not a manual check.",
          "Nothing automated proves the retries and backoff work; staging checks by hand do not last.",
        ],
      },
    ],
  },
  {
    title: "Fix typo in README install section",
    body: "The install section says `npm instal` instead of `npm install`.",
    kind: "trivial",
    defects: [],
  },
  {
    title: "Add CSV export to the reports page",
    body: "Finance asks for a CSV download of the monthly revenue report. Reports have up to 200,000 rows for our largest customers. Today they copy the HTML table into a spreadsheet by hand.",
    kind: "corroborated-high",
    defects: [
      {
        id: "CSV-SHAPE-1",
        stage: "shape",
        line: "Export every row of the report in one synchronous request that builds the whole file in memory.",
        fix: "Stream the export in pages of 5,000 rows, so a 200,000-row report neither times out nor exhausts memory.",
        lanes: ["shape.tech_lead", "shape.challenger"],
        severity: "HIGH",
        category: "scalability",
        wordings: [
          "Building a 200,000-row CSV in memory in one request will time out or exhaust memory.",
          "A synchronous, in-memory export will not scale to the largest customers' reports.",
          "Generating the whole file in a single request risks timeouts and memory blow-ups on big reports.",
        ],
      },
      {
        id: "CSV-PLAN-1",
        stage: "plan",
        line: "Test the export by hand on the staging data.",
        fix: "Add an integration test that exports a 20,000-row fixture and compares the CSV byte for byte.",
        lanes: ["plan.tester"],
        severity: "MEDIUM",
        category: "test_strategy",
        wordings: [
          "A manual test on staging data will not catch regressions in the export format.",
          "The export needs an automated test against a fixed fixture, not a check by hand.",
          "Nothing automated checks the CSV output; a hand test on staging proves little.",
        ],
      },
    ],
  },
  {
    title: "Let users delete their account",
    body: "Support handles GDPR deletion requests by hand today, and each takes about a week. Users should be able to delete their own account from the settings page. Some users own documents that are shared with their team.",
    kind: "human-question",
    defects: [
      {
        id: "DEL-SHAPE-1",
        stage: "shape",
        line: "Deleting an account removes all of the user's shared documents immediately.",
        fix: "Before deletion, the user's shared documents are transferred to a team admin, who is told by email.",
        lanes: ["shape.product_strategist", "shape.user_advocate"],
        severity: "HIGH",
        category: "product_decision",
        humanRequired: true,
        wordings: [
          "Whether shared documents are deleted or handed to the team is a product decision that needs a person.",
          "Deleting shared documents with the account could destroy teammates' work; product must decide what happens to them.",
          "What happens to documents other people rely on when their owner leaves is a policy question for product, not for this plan.",
        ],
      },
      {
        // One persona's lone HIGH about a real defect (the verifier confirms it; the shape is revised).
        id: "DEL-SHAPE-2",
        stage: "shape",
        line: "Run the whole deletion inside the web request that clicks Delete.",
        fix: "Queue the deletion as a background job that retries, and show the user that it is under way.",
        lanes: ["shape.tech_lead"],
        severity: "HIGH",
        category: "architecture",
        wordings: [
          "Deleting every record inside one web request will time out for large accounts and leave them half deleted.",
          "A synchronous deletion in the request cannot finish for big accounts and has no way to resume.",
          "The deletion needs a background job: inside the request it times out and leaves partial data behind.",
        ],
      },
      {
        id: "DEL-PLAN-1",
        stage: "plan",
        line: "Delete the account as soon as the user clicks **Delete** in settings.",
        fix: "Ask the user to re-enter their password and confirm by email before the account is deleted.",
        lanes: ["plan.risk_skeptic", "plan.builder"],
        severity: "HIGH",
        category: "security",
        wordings: [
          "An account can be deleted without re-authentication, so a stolen session can destroy it.",
          "There is no confirmation step protecting against accidental or malicious deletion.",
          "Deletion needs re-authentication: a hijacked session could wipe the account.",
        ],
      },
    ],
  },
  {
    title: "Migrate session storage from memory to Redis",
    body: "Sessions live in process memory, so every deploy logs everyone out and we cannot run more than one app server. Move sessions to the Redis cluster we already run for caching.",
    kind: "critical-in-plan",
    defects: [
      {
        id: "SES-DISC-1",
        stage: "discover",
        line: "All active sessions can be dropped during the migration without user impact.",
        fix: "Active sessions must survive the migration: nobody is logged out by it.",
        lanes: ["assumption_surfacer", "discovery.problem_sharpener"],
        severity: "HIGH",
        category: "assumption",
        wordings: [
          "Assuming sessions can be dropped contradicts the issue: being logged out is the very problem.",
          "The brief assumes logging everyone out is harmless, but that is exactly the pain the issue reports.",
          "Dropping every active session during the switch repeats the user-facing problem the issue complains about.",
        ],
      },
      {
        id: "SES-PLAN-1",
        stage: "plan",
        line: "Switch all app servers to Redis in one deploy and delete the in-memory store.",
        fix: "Dual-write sessions to memory and Redis for one release, then switch reads to Redis behind a flag that can roll back.",
        lanes: ["plan.risk_skeptic", "assumption_surfacer"],
        severity: "CRITICAL",
        category: "reliability",
        wordings: [
          "A one-shot cutover with no rollback path risks a full outage if Redis misbehaves.",
          "Switching every server at once and deleting the old store leaves no way back.",
          "The migration has no dual-write phase and no rollback, so one Redis problem logs out everyone.",
        ],
      },
      {
        id: "SES-PLAN-2",
        stage: "plan",
        line: "Reuse the caching cluster's default Redis user for session data.",
        fix: "Give sessions their own Redis ACL user and key prefix, with TLS between the app servers and Redis.",
        lanes: ["plan.risk_skeptic"],
        severity: "CRITICAL",
        category: "security",
        wordings: [
          "Session tokens stored under the cache's shared default user are readable by every service that uses the cache.",
          "Sharing the cache's default Redis credentials exposes session data to unrelated services.",
          "Sessions need their own Redis credentials; the default cache user lets anything with cache access hijack them.",
        ],
      },
    ],
  },
  {
    title: "Add a dark mode toggle to settings",
    body: "Several users asked for dark mode. The app already uses CSS variables for its colours, so a theme switch should be mostly a stylesheet change. The choice should follow the user across devices.",
    kind: "clean",
    defects: [],
  },
  {
    title: "Rate-limit the public search API",
    body: "One customer's scraper sent 50,000 search requests in an hour last Tuesday and slowed search for everyone. Add rate limiting to /api/search. Most of our customers call the API from servers behind a shared corporate NAT.",
    kind: "corroborated-high",
    defects: [
      {
        id: "RL-PLAN-1",
        stage: "plan",
        line: "Limit each IP address to 10 requests per minute.",
        fix: "Limit each API key to 600 requests per minute, with a per-IP limit only for anonymous calls, and answer 429 with a Retry-After header.",
        lanes: ["plan.builder", "plan.risk_skeptic"],
        severity: "HIGH",
        category: "edge_cases",
        wordings: [
          "A per-IP limit will throttle every customer behind a shared corporate NAT together.",
          "Customers calling from behind one NAT share an IP, so an IP-based limit punishes all of them for one scraper.",
          "Keying the limit on IP address blocks legitimate customers who share a NAT gateway.",
        ],
      },
      {
        id: "RL-SPEC-1",
        stage: "spec",
        line: 'The search API is "fast" under load.',
        fix: "With 600 requests per minute from one key, 99% of search replies arrive within 300 ms, and the 601st request gets a 429.",
        lanes: ["spec.judge"],
        severity: "HIGH",
        category: "testability",
        wordings: [
          '"Fast under load" is not measurable: the criterion needs a number and a load.',
          "The criterion cannot fail, because it names no latency target and no request rate.",
          "An acceptance criterion without a threshold cannot be checked by a test.",
        ],
      },
    ],
  },
  {
    title: "Import contacts from a Google Sheets link",
    body: "Sales teams keep their leads in Google Sheets and want to paste a share link to import them as contacts, instead of downloading and uploading a CSV file.",
    kind: "high-in-discover",
    defects: [
      {
        id: "GS-DISC-1",
        stage: "discover",
        line: "We will write our own parser for the Sheets file format.",
        fix: "We will read the sheet through the Sheets API's CSV export and reuse the existing CSV importer.",
        lanes: ["discovery.existing_solution_hunter", "discovery.cheapest_test_advocate"],
        severity: "HIGH",
        category: "existing_solution",
        wordings: [
          "The Sheets CSV export plus our existing CSV importer already solve this; a custom parser is waste.",
          "Writing a parser for the Sheets format duplicates what the CSV export endpoint and our importer already do.",
          "There is a cheaper path: export the sheet as CSV and feed it to the importer we already have.",
        ],
      },
      {
        id: "GS-PLAN-1",
        stage: "plan",
        line: "Fetch whatever URL the user pastes from our servers.",
        fix: "Accept only docs.google.com spreadsheet links, and fetch them through the Sheets API with the user's OAuth token.",
        // A real hole only one persona sees: a lone HIGH the verifier confirms (the real model's 0107 pattern).
        lanes: ["plan.risk_skeptic"],
        severity: "HIGH",
        category: "security",
        wordings: [
          "Fetching arbitrary pasted URLs server-side opens a server-side request forgery hole.",
          "The importer would fetch any URL from inside our network, which is an SSRF risk.",
          "Pasted links must be restricted to Google Sheets, or the server can be made to fetch internal addresses.",
        ],
      },
    ],
  },
  {
    title: "Webhook deliveries are sometimes sent twice",
    body: "Customers report duplicate webhook deliveries for about 0.5% of events, mostly right after our deploys. Their handlers are not idempotent, so they create duplicate orders.",
    kind: "critical-in-plan",
    defects: [
      {
        // Discovery's advice, settled by the shape writer: a concern whose id a replan must not renumber.
        id: "WH-DISC-1",
        stage: "discover",
        line: "Duplicates happen sometimes.",
        fix: "About 0.5% of events are delivered twice, mostly in the minutes after a deploy.",
        lanes: ["discovery.problem_sharpener"],
        severity: "MEDIUM",
        category: "problem",
        wordings: [
          "'Sometimes' gives no rate, so nobody can tell when the duplicates are fixed.",
          "The brief never says how often duplicates happen or when.",
          "How many deliveries are duplicated, and when, is not stated.",
        ],
      },
      {
        id: "WH-PLAN-1",
        stage: "plan",
        line: "Deduplicate deliveries with a set of sent event ids kept in process memory.",
        fix: "Record each delivery's event id in the database under a unique constraint before sending, so a retry after a restart cannot send it twice.",
        lanes: ["plan.risk_skeptic", "plan.builder", "assumption_surfacer"],
        severity: "CRITICAL",
        category: "correctness",
        wordings: [
          "An in-memory set of sent ids is lost on every deploy, which is exactly when the duplicates happen.",
          "Process-memory deduplication does not survive restarts, so the deploy-time duplicates stay.",
          "Keeping sent event ids in memory cannot deduplicate across restarts or across several workers.",
        ],
      },
      {
        id: "WH-PLAN-2",
        stage: "plan",
        line: "Assume the duplicates come from the retry worker.",
        fix: "Reproduce the duplicates first: replay a deploy in staging while sending 10,000 events, and count deliveries per event id.",
        // Only the final reviewer sees it, as on the real model: the cycle ends needs_replan and is replanned.
        lanes: ["plan_reviewer"],
        severity: "HIGH",
        category: "reproduction",
        wordings: [
          "The plan fixes a cause it never reproduced.",
          "Nothing shows the retry worker is the source of the duplicates; reproduce them first.",
          "Without a reproduction, the fix may target the wrong component.",
        ],
      },
    ],
  },
  {
    title: "Show the last login time on the profile page",
    body: "Users want to see when their account was last used, so they can spot logins they don't recognise. Show the last login time on the profile page.",
    kind: "minor-only",
    defects: [
      {
        id: "LL-SHAPE-1",
        stage: "shape",
        line: "Show the time in UTC.",
        fix: "Show the time in the viewer's time zone, with the UTC time on hover.",
        lanes: ["shape.user_advocate"],
        severity: "MEDIUM",
        category: "usability",
        wordings: [
          "Most users cannot read a UTC time at a glance to spot a strange login.",
          "Times in UTC make it hard for users to recognise their own logins.",
          "A UTC timestamp defeats the purpose: users compare it with their local clock.",
        ],
      },
      {
        // A lone HIGH that is a nitpick: the verifier refutes it and it stays advice (MEDIUM, raised HIGH).
        id: "LL-PLAN-2",
        stage: "plan",
        line: "Label the field Last login.",
        fix: "Label the field Last sign-in.",
        lanes: ["plan.builder"],
        severity: "HIGH",
        category: "convention",
        nitpick: true,
        wordings: [
          "The label should say 'Last sign-in' to match the wording used elsewhere in the product.",
          "'Last login' clashes with the product's 'sign-in' wording.",
          "Use 'sign-in', not 'login', in the field label.",
        ],
      },
      {
        id: "LL-PLAN-1",
        stage: "plan",
        line: "Store the last login time as a formatted string.",
        fix: "Store the last login time as a UTC timestamp and format it when rendering.",
        lanes: ["plan.builder"],
        severity: "LOW",
        category: "convention",
        wordings: [
          "A formatted string cannot be sorted or converted between time zones.",
          "Storing display text instead of a timestamp breaks time-zone conversion.",
          "The stored value should be a timestamp; formatting belongs in the view.",
        ],
      },
    ],
  },
];

/** Ten realistic issues for the end-to-end benchmark: clean ones, CRITICALs in the plan, corroborated HIGHs, a product question. */
export const bench10: Bench = {
  list,
  issues: Object.fromEntries(list.map((i) => [i.title, i.defects])),
  trivial: list.filter((i) => i.kind === "trivial").map((i) => i.title),
};
