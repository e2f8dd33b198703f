import type { Hono } from "hono";
import { DissentError, StoreError } from "../errors.js";
import { issuePage, runPage, stageRounds, wikiEntries, type Estimator, type EventIndex } from "../read-models.js";
import type { Store } from "../store/port.js";
import type { Tracker } from "../trackers/port.js";
import type { BoardCache } from "./board.js";
import type { EventHub } from "./hub.js";
import { intParam, type Respond } from "./respond.js";

/** What the JSON API reads from. */
export interface ApiDeps {
  store: Store;
  tracker: Tracker;
  index: EventIndex;
  hub: EventHub;
  board: BoardCache;
  respond: Respond;
  /** Resolves once the index holds the whole log (the server answers before that). */
  ready: Promise<void>;
  /** Prices calls of unknown price from their tokens (docs/serve.md "Cost"). */
  estimate?: Estimator;
}

/** The routes, for `GET /api` and the README. */
export const API_ROUTES: Record<string, string> = {
  "GET /api/issues": "the board: every issue with its state label (column), status, running stage, pending concerns, calls and dollars",
  "GET /api/issues/:id": "one issue: the issue, its planning cycles with each stage's rounds and calls, and every concern's lineage",
  "GET /api/issues/:id/stages/:cycle/:stage": "what a stage's rounds said: each round's draft, each critic's findings, the verifier's verdicts, what blocked",
  "GET /api/events?after=SEQ&limit=N&issue=ID&type=T,U": "the event log, oldest first, each event with its seq (limit 1..1000, default 200)",
  "GET /api/events/stream?after=SEQ&issue=ID": "server-sent events, one per committed event (id = seq); resumes after Last-Event-ID",
  "GET /api/wiki": "wiki entries, each with the issues it was given to",
  "GET /api/wiki/:id": "one wiki entry with its markdown",
  "GET /api/stats": "calls, tokens and dollars: totals and by role, model, day (UTC) and issue",
  "GET /api/runs?limit=N": "the audit runs of dissent run, latest first (limit 1..1000, default 100)",
  "GET /api/runs/:id": "one run with its calls and, when its calls carry text (log_content: true), its prompt, draft, concerns and final answer",
};

const ID = /^[A-Za-z0-9._:#/-]{1,200}$/;

/** The read-only JSON API under /api/ (docs/serve.md). */
export function apiRoutes(app: Hono, deps: ApiDeps): void {
  const { store, tracker, index, respond } = deps;
  const bad = (c: Parameters<Respond>[0], error: string) => respond(c, { error }, 400);

  app.get("/api", (c) => respond(c, { routes: API_ROUTES }));

  app.get("/api/issues", async (c) => {
    return respond.raw(c, await deps.board.body(respond.serialize));
  });

  app.get("/api/issues/:id", async (c) => {
    const id = c.req.param("id").replace(/^#/, "");
    if (!ID.test(id)) return bad(c, "not an issue id");
    await deps.ready;
    try {
      return respond(c, await issuePage(store, tracker, id, (entry) => index.givenTo(entry), deps.estimate));
    } catch (e) {
      // The tracker says the issue does not exist (or cannot be read): that is the answer, not a crash.
      if (DissentError.isInstance(e) && e.name !== StoreError.errorName) return respond(c, { error: e.message }, 404);
      throw e;
    }
  });

  app.get("/api/issues/:id/stages/:cycle/:stage", async (c) => {
    const id = c.req.param("id").replace(/^#/, "");
    if (!ID.test(id)) return bad(c, "not an issue id");
    const cycle = intParam(c.req.param("cycle"), "cycle", 1, 1_000_000);
    if (typeof cycle !== "number") return bad(c, typeof cycle === "object" ? cycle.error : "cycle must be a whole number");
    const stage = c.req.param("stage");
    if (!/^[a-z_]{1,64}$/.test(stage)) return bad(c, "not a stage name");
    return respond(c, await stageRounds(store, id, cycle, stage));
  });

  app.get("/api/events", async (c) => {
    const after = intParam(c.req.query("after"), "after", 0, Number.MAX_SAFE_INTEGER);
    const limit = intParam(c.req.query("limit"), "limit", 1, 1000);
    if (typeof after === "object") return bad(c, after.error);
    if (typeof limit === "object") return bad(c, limit.error);
    const issue = c.req.query("issue");
    if (issue !== undefined && !ID.test(issue)) return bad(c, "issue is not an issue id");
    const types = (c.req.query("type") ?? "").split(",").filter(Boolean);
    if (types.some((t) => !/^[A-Za-z]{1,64}$/.test(t))) return bad(c, "type is a comma-separated list of event types");
    const [events, lastSeq] = await Promise.all([
      store.events({ after: after ?? 0, limit: limit ?? 200, ...(issue ? { issueId: issue.replace(/^#/, "") } : {}), ...(types.length ? { types } : {}) }),
      store.lastSeq(),
    ]);
    return respond(c, { events, last_seq: lastSeq, next_after: events.at(-1)?.seq ?? after ?? 0 });
  });

  app.get("/api/wiki", async (c) => {
    await deps.ready;
    return respond(c, { entries: await wikiEntries(store, (entry) => index.givenTo(entry)) });
  });

  app.get("/api/wiki/:id", async (c) => {
    await deps.ready;
    const entry = (await wikiEntries(store, (e) => index.givenTo(e), true)).find((e) => e.id === c.req.param("id"));
    return entry ? respond(c, entry) : respond(c, { error: `no wiki entry '${c.req.param("id").slice(0, 100)}'` }, 404);
  });

  app.get("/api/stats", async (c) => {
    await deps.ready;
    return respond(c, index.stats());
  });

  app.get("/api/runs", async (c) => {
    const limit = intParam(c.req.query("limit"), "limit", 1, 1000);
    if (typeof limit === "object") return bad(c, limit.error);
    await deps.ready;
    return respond(c, { runs: index.listRuns(limit ?? 100), last_seq: index.lastSeq });
  });

  app.get("/api/runs/:id", async (c) => {
    await deps.ready;
    const run = index.run(c.req.param("id"));
    return run
      ? respond(c, { ...(await runPage(store, run)), last_seq: index.lastSeq })
      : respond(c, { error: `no run '${c.req.param("id").slice(0, 100)}'` }, 404);
  });
}
