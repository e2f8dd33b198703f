import type { Command } from "commander";

/**
 * The `Examples:` section of every command's `--help` (issue 31 item 10): a sentence saying what the
 * example does, then the command line. Keyed by the command's path below `dissent` ("" is `dissent`
 * itself); a command with no entry fails test/cli/help-examples.test.ts.
 */
export const EXAMPLES: Readonly<Record<string, readonly (readonly [string, string])[]>> = {
  "": [
    ["Answer a prompt, audited by a model of another family:", 'dissent run --audit "At what temperature is chicken safe to eat?"'],
    ["Plan an issue through the councils, then read the plan:", 'dissent issue new --title "Add CSV export"  &&  dissent issue plan 1'],
    ["Write a config for the models this machine has, then check every route:", "dissent init  &&  dissent doctor"],
  ],
  run: [
    ["Print the executor's answer, unaudited:", 'dissent run "Summarise RFC 9110 in three bullets."'],
    ["Audit the answer; a needs_work verdict gets one revision:", 'dissent run --audit "How long should a 20 lb turkey thaw in the fridge?"'],
    [
      "As a CI check: exit 3 on needs_work, 4 if the challenger failed, 5 if the revision added facts:",
      "dissent run --audit --fail-on needs_work,challenger_failed,drift --json < prompt.txt",
    ],
    [
      "Add a constraint and a policy file (both repeatable):",
      'dissent run --audit --constraint "At most 3 bullet points." --policy policies/metric.md "Roast potatoes?"',
    ],
    ["Answer from the reply cache only (fails on a miss, never calls a model):", 'dissent run --audit --replay "How tall is the Eiffel Tower?"'],
  ],
  issue: [
    ["Create a local issue and plan it:", 'dissent issue new --title "Rate-limit the login endpoint" --body-file issue.md  &&  dissent issue plan 1'],
    ["See every issue and its state:", "dissent issue list"],
  ],
  "issue new": [
    [
      "Create an issue from a title and a body file; prints its id:",
      'dissent issue new --title "Add CSV export" --body-file body.md --label dissent-load-bearing',
    ],
    ["Read the body from stdin:", 'gh issue view 42 --json body -q .body | dissent issue new --title "Import #42" --body-file -'],
  ],
  "issue list": [
    ["List the issues with their dissent state:", "dissent issue list"],
    ["The same as JSON, for a script:", "dissent issue list --json"],
  ],
  "issue show": [
    ["Show an issue, its plan and its pending concerns:", "dissent issue show 3"],
    ["Print only the plan of the latest cycle:", "dissent issue show 3 --artifact plan"],
  ],
  "issue plan": [
    ["Plan an issue: brief, shape, plan and acceptance criteria, each argued by a council:", "dissent issue plan 3"],
    ["Plan a ready issue again, in a new cycle:", "dissent issue plan 3 --replan"],
    ["Replay a plan from the reply cache, without calling a model:", "dissent issue plan 3 --replay"],
  ],
  "issue implement": [["Have the configured coding agent implement a ready plan, review its diff, and open a pull request:", "dissent issue implement 3"]],
  "issue merged": [["Record that pull request 17 merged issue 3 (its unresolved serious concerns become known gaps):", "dissent issue merged 3 --pr 17"]],
  "issue resolve": [
    [
      "Record that a pending concern was fixed in code:",
      'dissent issue resolve 3 PLAN-RISK_SKEPTIC-001 --kind addressed-in-code --note "rate limit added in auth.ts"',
    ],
    ["Defer a concern to later work:", 'dissent issue resolve 3 SHAPE-TECH_LEAD-002 --kind deferred --note "tracked in #58"'],
  ],
  "issue label": [
    ["Route an issue to the full pipeline whatever its size:", "dissent issue label 3 --add dissent-load-bearing"],
    ["Take the label off again:", "dissent issue label 3 --remove dissent-load-bearing"],
  ],
  events: [
    ["Every event of one issue, oldest first:", "dissent events --issue 3"],
    ["Follow the log as planners write to it (Ctrl-C stops):", "dissent events --follow --json"],
  ],
  wiki: [
    ["List the known gaps the councils of later issues are shown:", "dissent wiki list"],
    ["Export them for editing, then read the edits back:", "dissent wiki export wiki/  &&  dissent wiki import wiki/"],
  ],
  "wiki list": [["List every known gap:", "dissent wiki list"]],
  "wiki show": [["Print one entry:", "dissent wiki show retrying-a-post-duplicates-orders-3f9a1c2e"]],
  "wiki prune": [["Stop showing gaps older than 180 days (they are kept, marked stale):", "dissent wiki prune --older-than 180"]],
  "wiki export": [["Write every entry as a markdown file:", "dissent wiki export wiki/"]],
  "wiki import": [["Read hand-edited entries back into the store:", "dissent wiki import wiki/"]],
  cache: [["Remove replies cached more than 30 days ago:", "dissent cache clear --older-than 30"]],
  "cache clear": [
    ["Remove every cached reply:", "dissent cache clear"],
    ["Remove replies cached more than 30 days ago:", "dissent cache clear --older-than 30"],
  ],
  eval: [
    ["Measure the configured challenger on the bundled drafts:", "dissent eval gate --html report.html"],
    ["Measure the revision-drift check on the bundled revisions (no model calls):", "dissent eval drift"],
    ["Compare two runs' reports:", "dissent eval compare before.json after.json"],
  ],
  "eval gate": [
    ["Run the challenger (and revisions) over the bundled 77 drafts, with a report page:", "dissent eval gate --html report.html"],
    ["Keep the JSON report of a run to compare it later:", "dissent eval gate --json > qwen-gemma.json"],
    ["Your own labelled set, its first 10 items:", "dissent eval gate --set my-drafts.yaml --limit 10"],
  ],
  "eval pipeline": [["Plan the first 4 bundled issues and judge the plans and councils:", "dissent eval pipeline --limit 4"]],
  "eval drift": [
    ["Measure the revision-drift check on the bundled real-model revisions (deterministic; no model calls):", "dissent eval drift"],
    ["Your own labelled revisions, as JSON:", "dissent eval drift --set my-revisions.json --json"],
  ],
  "eval compare": [["Each metric of B against A, with the 95 % interval of the difference:", "dissent eval compare qwen-gemma.json qwen-frontier.json"]],
  factory: [
    ["Plan every issue labelled dissent-find as it arrives, 8 at a time:", "dissent factory --concurrency 8"],
    ["One poll, for cron: plan what is waiting, then exit:", "dissent factory --once"],
  ],
  migrate: [["Copy the embedded store of ./.dissent into the config's PostgreSQL store:", "dissent migrate --from-sqlite .dissent"]],
  serve: [
    ["The dashboard on http://127.0.0.1:5555:", "dissent serve"],
    ["On another port:", "dissent serve --port 8080"],
  ],
  mcp: [
    ["Register dissent's tools with Claude Code (stdio):", "claude mcp add dissent -- node /abs/dissent/dist/cli/bin.js mcp"],
    ["Serve Streamable HTTP at http://127.0.0.1:7777/mcp:", "dissent mcp --http 127.0.0.1:7777"],
  ],
  pr: [["Review pull request 7 and post the review and the dissent check on it:", "dissent pr review 7"]],
  "pr review": [
    ["Review pull request 7 (a person's too) and post the review and the dissent check on it:", "dissent pr review 7"],
    ["The same, as JSON for a script:", "dissent pr review 7 --json"],
  ],
  github: [["What the Action runs on an issue_comment event:", 'dissent github comment --event "$GITHUB_EVENT_PATH"']],
  "github comment": [["Answer the /dissent command of a comment event:", 'dissent github comment --event "$GITHUB_EVENT_PATH"']],
  "github closed": [["Record the merge when a merged pull request closed the issue:", 'dissent github closed --event "$GITHUB_EVENT_PATH"']],
  init: [
    ["Write a config for the models found on this machine (keys, Ollama, the embedded engine):", "dissent init"],
    ["For an OpenAI-compatible server of your own (vLLM, LM Studio, a gateway):", "dissent init --base-url http://127.0.0.1:8000/v1 --model qwen3-8b"],
  ],
  doctor: [["Check every route: reachable, key, model present, JSON mode:", "dissent doctor"]],
};

/** The section as --help prints it. */
export function examplesText(examples: readonly (readonly [string, string])[]): string {
  return `\nExamples:\n${examples.map(([what, line]) => `  ${what}\n    $ ${line}`).join("\n")}`;
}

/** Adds each command's examples to its --help, before the reference line. */
export function addExamples(program: Command): void {
  const visit = (c: Command, path: string[]) => {
    const examples = EXAMPLES[path.join(" ")];
    if (examples) c.addHelpText("after", examplesText(examples));
    for (const sub of c.commands) visit(sub, [...path, sub.name()]);
  };
  visit(program, []);
}
