import type { ServerResponse } from "node:http";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { afterEach, describe, expect, it } from "vitest";
import { exitCodeOf } from "../../src/cli/exit-codes.js";
import { RunError } from "../../src/errors.js";
import { githubTracker, type GithubOptions } from "../../src/trackers/github.js";
import { closeServers, serve } from "../support/plain-server.js";
import { FAST, rejection } from "./github-fixtures.js";

/**
 * The GitHub client's bounds (docs/limits.md "GitHub", issue 32): a reply is read no further than
 * `tracker.max_reply_bytes`, and each request has a total deadline that fires even on a body that
 * drips a byte at a time — against a local HTTP server that does what a hostile or broken one does.
 */

const TOKEN = "ghp_testTOKEN1234567890";
afterEach(closeServers);

/** The collector, callable: the drip below runs it while the request waits, as a long-lived process would. */
setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

const trackerAt = (url: string, maxReplyBytes?: number, options: GithubOptions = {}) =>
  githubTracker(
    { type: "github", repo: "acme/widgets", token_env: "GITHUB_TOKEN", base_url: url, ...(maxReplyBytes ? { max_reply_bytes: maxReplyBytes } : {}) },
    { GITHUB_TOKEN: TOKEN },
    "dissent.config.yaml",
    { ...FAST, ...options },
  );

/** The one-line failure every GitHub error must be: a RunError, exit 1, no token. */
async function failure(p: Promise<unknown>): Promise<string> {
  const e = await rejection(p);
  expect(RunError.isInstance(e), `${e.name}: ${e.message}`).toBe(true);
  expect(exitCodeOf(e)).toBe(1);
  expect(e.message).not.toContain("\n");
  expect(e.message).not.toContain(TOKEN);
  return e.message;
}

const ISSUE = JSON.stringify({ number: 1, title: "x".repeat(900), state: "open", labels: [], body: "y".repeat(3000) });

/** Pours a JSON array of issues for as long as the client reads; resolves when the connection closes. */
function pour(res: ServerResponse): Promise<void> {
  res.writeHead(200, { "content-type": "application/json; charset=utf-8" });
  res.write("[");
  const chunk = `${Array.from({ length: 16 }, () => ISSUE).join(",")},`;
  let open = true;
  const closed = new Promise<void>((r) => res.on("close", () => r()));
  res.on("close", () => (open = false));
  const more = () => {
    while (open && res.write(chunk));
    if (open) res.once("drain", more);
  };
  more();
  return closed;
}

describe("GitHub replies are capped by tracker.max_reply_bytes", () => {
  it("an issues page that never ends is read to the cap, then one line; the connection is dropped and it is not retried", async () => {
    let closed: Promise<void> | undefined;
    const s = await serve((_req, res) => void (closed = pour(res)));
    const message = await failure(trackerAt(s.url, 1_048_576).list());
    expect(message).toBe(
      `GitHub at ${s.url} sent a reply larger than 1 MiB for acme/widgets while listing open issues, the limit tracker.max_reply_bytes sets: it was not read further; raise tracker.max_reply_bytes if replies this large are expected, or check the server at ${s.url}`,
    );
    await closed; // the server saw its connection closed: nothing more is read
    expect(s.seen).toHaveLength(1);
  });

  it("by default the cap is 32 MiB", async () => {
    const s = await serve((_req, res) => void pour(res));
    expect(await failure(trackerAt(s.url).list())).toContain("larger than 32 MiB");
    expect(s.seen).toHaveLength(1);
  });

  it("a Content-Length past the cap fails before a byte of the body is read", async () => {
    const s = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "application/json", "content-length": String(400 * 1024 * 1024) });
      res.write("["); // and never more: only the declared length can end the wait
    });
    expect(await failure(trackerAt(s.url, 1_048_576).get("12"))).toMatch(
      /^GitHub at .* sent a reply larger than 1 MiB for acme\/widgets while reading issue #12/,
    );
    expect(s.seen).toHaveLength(1);
  });

  it("a reply under the cap is read as before", async () => {
    const s = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({ number: 12, title: "Retry the upload", state: "open", labels: [], body: "b", html_url: "https://github.com/acme/widgets/issues/12" }),
      );
    });
    const issue = await trackerAt(s.url, 65_536).get("12");
    expect(issue.title).toBe("Retry the upload");
  });
});

describe("each GitHub request has a total deadline", () => {
  it("a body that drips a byte at a time is cut at the deadline (the collector running meanwhile), retried, then one line", async () => {
    const s = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write("[");
      const drip = setInterval(() => {
        gc();
        res.write(" ");
      }, 20);
      res.on("close", () => clearInterval(drip));
    });
    const message = await failure(trackerAt(s.url, undefined, { requestTimeoutMs: 300 }).list());
    expect(message).toBe(
      `GitHub at ${s.url} did not answer within 300 ms (after retries) for acme/widgets while listing open issues: check the network connection and tracker.base_url (${s.url}), then run the command again`,
    );
    expect(s.seen).toHaveLength(3);
  });
});
