import { describe, expect, it } from "vitest";
import { parseCommentCommand, suggestCommand } from "../../src/github/comment-command.js";

describe("reading a /dissent command from a comment (docs/github-action.md)", () => {
  it.each([
    ["/dissent plan", { name: "plan" }],
    ["Thanks!\r\n\r\n/dissent replan\r\n", { name: "replan" }],
    ["  /dissent trivial  ", { name: "route", label: "dissent-trivial" }],
    ["/dissent load-bearing", { name: "route", label: "dissent-load-bearing" }],
    ["/dissent implement", { name: "implement" }],
    [
      "/dissent resolve DISC-3 fixed by the retry patch",
      { name: "resolve", concern: "DISC-3", kind: "addressed-in-code", said: "fixed", note: "by the retry patch" },
    ],
    ["/dissent resolve DISC-3 Accepted", { name: "resolve", concern: "DISC-3", kind: "deferred", said: "accepted", note: "" }],
    ["/dissent resolve DISC-3 rejected", { name: "resolve", concern: "DISC-3", kind: "ignored", said: "rejected", note: "" }],
    ["/dissent resolve DISC-3 addressed-in-test", { name: "resolve", concern: "DISC-3", kind: "addressed-in-test", said: "addressed-in-test", note: "" }],
    ["/dissent resolve DISC-3 maybe", { name: "unknown", text: "resolve DISC-3 maybe" }],
    ["/dissent", { name: "unknown", text: "" }],
    ["<!-- a note -->\n\n/dissent plan", { name: "plan" }],
    ["<details><summary>log</summary>\n\nlong log\n\n</details>\n\n/dissent plan", { name: "plan" }],
    ["> quoted\n\n/dissent plan", { name: "plan" }],
    ["Some words\n/dissent plan\nmore words", { name: "plan" }],
    ["\\/dissent plan", { name: "plan" }],
  ])("%j", (body, want) => {
    expect(parseCommentCommand(body)).toEqual(want);
  });

  it.each([
    "> /dissent plan",
    "   > /dissent plan",
    "```\n/dissent plan\n```",
    "~~~md\n/dissent resolve X fixed\n~~~",
    "    /dissent plan",
    "Please run `/dissent plan` when ready.",
    "/dissentplan",
    "We could /dissent plan later.",
    // Hidden or not top-level in the rendered markdown (issue 32): a maintainer pasting it never saw a command.
    "<!-- /dissent plan -->",
    "<!--\n/dissent implement\n-->",
    "<!--\n\n/dissent implement\n\n-->",
    "Looks good <!--\n/dissent implement\n-->",
    "<pre>\n/dissent implement\n</pre>",
    "<pre>\n\n/dissent implement\n\n</pre>",
    "<details>\n/dissent implement\n</details>",
    "<details><summary>log</summary>\n\n/dissent implement\n\n</details>",
    "<div><details>\n\n</details>\n\n/dissent implement\n\n</div>",
    "> a quote\n/dissent implement",
    "> a quote\n> goes on\n/dissent implement",
    "- a list\n  /dissent implement",
    "`code\n/dissent implement\n`",
    "**/dissent implement**",
    "Hi <br>\n/dissent implement",
  ])("not a command: %j", (body) => {
    expect(parseCommentCommand(body)).toBeUndefined();
  });

  it("the first command outside quotes and fences counts, after an unclosed fence nothing does", () => {
    expect(parseCommentCommand("> /dissent replan\n```\n/dissent plan\n```\n/dissent trivial\n/dissent plan")).toEqual({
      name: "route",
      label: "dissent-trivial",
    });
    expect(parseCommentCommand("```\n/dissent plan")).toBeUndefined();
  });
});

describe("the nearest command to a mistyped one (docs/github-action.md)", () => {
  it.each([
    ["paln", "/dissent plan"],
    ["PLNA", "/dissent plan"],
    ["replna", "/dissent replan"],
    ["trivail", "/dissent trivial"],
    ["load-baering", "/dissent load-bearing"],
    ["implment", "/dissent implement"],
    ["resovle C-3 fixed now", "/dissent resolve C-3 fixed now"],
    ["resolve C-3 fixd", "/dissent resolve C-3 fixed"],
    ["resolve C-3 acepted the risk", "/dissent resolve C-3 accepted the risk"],
    ["resolve C-3", "/dissent resolve CONCERN-ID fixed|accepted|rejected [note]"],
    ["resolve C-3 maybe", "/dissent resolve CONCERN-ID fixed|accepted|rejected [note]"],
  ])("%j → %j", (text, want) => {
    expect(suggestCommand(text)).toBe(want);
  });

  it.each(["frobnicate", "", "deploy now", "help"])("nothing near %j", (text) => {
    expect(suggestCommand(text)).toBeUndefined();
  });
});
