import { Command, CommanderError, Option } from "commander";
import { packageVersion } from "../package-root.js";
import { linkDocs } from "./docs-links.js";
import { addExamples } from "./examples.js";
import { fail, type Io } from "./io.js";

const collect = (value: string, previous: string[]) => [...previous, value];
/** Options every command takes, accepted before the command name as well as after it. */
const GLOBAL_OPTIONS = ["json", "config", "verbose"] as const;
const version = packageVersion();

/** Builds the command tree. Command bodies are imported lazily so `--version` and `--help` stay fast. */
export function buildProgram(io: Io, done: (code: number) => void): Command {
  const program = new Command("dissent")
    .description("Bounded, auditable adversarial review of LLM work.")
    .version(version, "-V, --version")
    .showSuggestionAfterError(true)
    .exitOverride()
    .configureOutput({
      writeOut: (s) => io.stdout(s),
      writeErr: (s) => io.stderr(s),
      outputError: () => undefined, // reported once, in our own format, by run()
    });
  const common = (c: Command) =>
    c
      .option("--json", "machine-readable output")
      .option("--config <file>", "config file (default: $DISSENT_CONFIG, then ./dissent.config.yaml)")
      .option("--verbose", "every model call on stderr; stack traces on errors");
  // The global options work before the command too (`dissent --config F run …`): given there, they
  // reach the command unless it was given its own (docs/configuration.md).
  common(program).hook("preAction", (_program, action) => {
    const globals = program.opts<Record<string, unknown>>();
    for (const key of GLOBAL_OPTIONS) {
      if (globals[key] !== undefined && action.getOptionValue(key) === undefined) action.setOptionValue(key, globals[key]);
    }
  });
  const cached = (c: Command) =>
    c
      .addOption(new Option("--no-cache", "do not read the reply cache (new replies replace cached ones)"))
      .option("--replay", "answer only from the cache; fail on any miss, never touch the network");

  cached(
    common(
      program
        .command("run")
        .description(
          "Answer a prompt with the executor model. With --audit, a challenger model of another family checks the answer against the constraints and policies, and at most one revision follows.",
        )
        .argument("[prompt]", "the prompt; read from stdin when omitted and stdin is not a TTY")
        .option("--audit", "audit the draft with the challenger")
        .option(
          "--fail-on <conditions>",
          "with --audit, exit non-zero (after printing the answer) when a condition holds: needs_work (exit 3), challenger_failed (4), drift (5); a comma list, repeatable; the highest code wins",
          collect,
          [],
        )
        .option("--constraint <text|file>", "add a constraint, as text or a file path (repeatable)", collect, [])
        .option("--policy <text|file>", "add a policy, as text or a file path (repeatable)", collect, []),
    ),
  ).action(async (prompt: string | undefined, opts) => done(await (await import("./run.js")).runCommand(prompt, opts, io)));

  const issue = program
    .command("issue")
    .description("Plan issues: each stage (brief, shape, plan, acceptance criteria) is argued by a council of critic models until it holds.");
  common(issue.command("new").description("Create an issue in the local tracker; prints its id."))
    .requiredOption("--title <title>", "issue title")
    .option("--body <text>", "issue body")
    .option("--body-file <file>", "read the body from a file ('-' for stdin)")
    .option("--label <label>", "add a label (repeatable)", collect, [])
    .action(async (opts) => done(await (await import("./issue.js")).issueNew(opts, io)));
  common(issue.command("list").description("List issues with their dissent state.")).action(async (opts) =>
    done(await (await import("./issue.js")).issueList(opts, io)),
  );
  common(issue.command("show").description("Show one issue, its plan and pending concerns.").argument("<id>"))
    .option("--artifact <name>", "print one artifact of the latest cycle: brief | shape | plan | acceptance_criteria")
    .option("--context", "print the code each stage's roles read: files, excerpts and context-file sections, ranked, and why")
    .action(async (id: string, opts) => done(await (await import("./issue.js")).issueShow(id, opts, io)));
  cached(
    common(
      issue.command("plan").description("Plan an issue: route it by size, argue each stage with its council, then have the plan reviewed.").argument("<id>"),
    ),
  )
    .option("--replan", "plan an issue whose plan is already ready again (a new cycle; see docs/issue.md)")
    .action(async (id: string, opts) => done(await (await import("./issue.js")).issuePlan(id, opts, io)));
  cached(
    common(
      issue
        .command("implement")
        .description("Implement a ready issue with a coding agent in a worktree; review the diff; open a pull request.")
        .argument("<id>"),
    ),
  ).action(async (id: string, opts) => done(await (await import("./implement.js")).issueImplement(id, opts, io)));
  common(
    issue
      .command("merged")
      .description("Record that a pull request merged the issue: its unresolved serious concerns become known gaps in the wiki.")
      .argument("<id>"),
  )
    .requiredOption("--pr <n>", "the merging pull request number")
    .action(async (id: string, opts) => done(await (await import("./issue.js")).issueMerged(id, opts, io)));
  common(issue.command("resolve").description("Record by hand how a pending concern was resolved.").argument("<id>").argument("<concern_id>"))
    .requiredOption("--kind <kind>", "trivial | deferred | addressed-in-code | addressed-in-test | ignored")
    .option("--note <text>", "what was done", "")
    .action(async (id: string, concernId: string, opts) => done(await (await import("./issue.js")).issueResolve(id, concernId, opts, io)));
  common(issue.command("label").description("Add or remove labels of a local issue (state labels move through the transition table).").argument("<id>"))
    .option("--add <label>", "add a label (repeatable)", collect, [])
    .option("--remove <label>", "remove a label (repeatable)", collect, [])
    .action(async (id: string, opts) => done(await (await import("./issue.js")).issueLabel(id, opts, io)));

  common(program.command("events").description("The event log, oldest first."))
    .option("--issue <id>", "only this issue's events")
    .option("--follow", "then print every event as any process commits it, until Ctrl-C")
    .action(async (opts) => done(await (await import("./events.js")).eventsCommand(opts, io)));

  const wiki = program.command("wiki").description("Known gaps: serious concerns that shipped unresolved, shown to the councils of later issues.");
  common(wiki.command("list").description("List wiki entries.")).action(async (opts) => done(await (await import("./wiki.js")).wikiList(opts, io)));
  common(wiki.command("show").description("Print one wiki entry.").argument("<entry>")).action(async (entry: string, opts) =>
    done(await (await import("./wiki.js")).wikiShow(entry, opts, io)),
  );
  common(wiki.command("prune").description("Mark entries older than N days stale (never injected again)."))
    .requiredOption("--older-than <days>", "age in days")
    .action(async (opts) => done(await (await import("./wiki.js")).wikiPrune(opts, io)));
  common(wiki.command("export").description("Write every wiki entry as a markdown file into DIR.").argument("<dir>")).action(async (dir: string, opts) =>
    done(await (await import("./wiki.js")).wikiExport(dir, opts, io)),
  );
  common(wiki.command("import").description("Read hand-edited wiki entry files from DIR back into the store.").argument("<dir>")).action(
    async (dir: string, opts) => done(await (await import("./wiki.js")).wikiImport(dir, opts, io)),
  );

  const cache = program.command("cache").description("The content-addressed reply cache.");
  common(cache.command("clear").description("Remove cached replies (all, or older than DAYS) and say how many."))
    .option("--older-than <days>", "only replies cached more than DAYS days ago")
    .action(async (opts) => done(await (await import("./cache.js")).cacheClear(opts, io)));

  const evalCmd = program.command("eval").description("Measure the challenger's and the councils' judgment on labelled sets.");
  const evalOpts = (c: Command) =>
    common(c)
      .option("--set <file>", "a labelled set (JSON or YAML) instead of the bundled one")
      .option("--limit <n>", "only the first N items")
      .option("--html <file>", "also write a self-contained report page");
  evalOpts(evalCmd.command("gate").description("Run the configured challenger (and revision) over planted-defect drafts.")).action(async (opts) =>
    done(await (await import("./eval.js")).evalGate(opts, io)),
  );
  evalOpts(evalCmd.command("pipeline").description("Plan issues with gold checklists and judge the plans and councils.")).action(async (opts) =>
    done(await (await import("./eval.js")).evalPipeline(opts, io)),
  );
  common(evalCmd.command("drift").description("Measure the revision-drift check on labelled real-model revisions: deterministic, no model calls."))
    .option("--set <file>", "a labelled drift set (JSON) instead of the bundled one")
    .option("--limit <n>", "only the first N items")
    .action(async (opts) => done(await (await import("./eval.js")).evalDrift(opts, io)));
  common(
    evalCmd.command("compare").description("Each metric's difference between two --json reports, with its interval.").argument("<a>").argument("<b>"),
  ).action(async (a: string, b: string, opts) => done(await (await import("./eval.js")).evalCompare(a, b, opts, io)));

  common(program.command("factory").description("Plan every new issue as it arrives, on one machine or many."))
    .option("--once", "one poll: plan what it finds, then exit (0 all planned, 1 any failed)")
    .option("--concurrency <n>", "issues planned at once by this process (default factory.concurrency, 4)")
    .action(async (opts) => done(await (await import("./factory.js")).factoryCommand(opts, io)));
  common(program.command("migrate").description("Copy an embedded (SQLite) store into the PostgreSQL store the config names."))
    .requiredOption("--from-sqlite <home>", "the dissent home holding dissent.db")
    .action(async (opts) => done(await (await import("./migrate.js")).migrateCommand(opts, io)));

  common(program.command("serve").description("A live, read-only dashboard of the store, with a JSON API."))
    .option("--port <port>", "port to listen on", "5555")
    .option("--host <host>", "address to bind (anything but loopback needs DISSENT_SERVE_TOKEN)", "127.0.0.1")
    .action(async (opts) => done(await (await import("./serve.js")).serveCommand(opts, io)));

  common(program.command("mcp").description("dissent's tools for coding agents over the Model Context Protocol (stdio, or --http)."))
    .option("--http <host:port>", "serve Streamable HTTP at /mcp instead of stdio (anything but loopback needs a token)")
    .option("--token-env <var>", "the environment variable holding the HTTP bearer token (default DISSENT_MCP_TOKEN)")
    .action(async (opts) => done(await (await import("./mcp.js")).mcpCommand(opts, io)));

  const pr = program.command("pr").description("Review pull requests on GitHub: inline comments and a check (docs/github-action.md).");
  cached(
    common(
      pr
        .command("review")
        .description(
          "Review a pull request (a person's too) against the plan of the issue it closes, or its description; post the review and the dissent check. Never pushes, never approves.",
        )
        .argument("<number>", "the pull request's number"),
    ),
  ).action(async (n: string, opts) => done(await (await import("./pr.js")).prReview(n, opts, io)));

  const github = program.command("github").description("dissent in GitHub Actions: comment commands (docs/github-action.md).");
  common(github.command("comment").description("Handle the /dissent command of an issue_comment event payload (what the Action runs)."))
    .requiredOption("--event <file>", "the event payload ($GITHUB_EVENT_PATH)")
    .action(async (opts) => done(await (await import("./github.js")).githubComment(opts, io)));
  common(github.command("closed").description("Record the merge of an issues event's issue, when a merged pull request closed it (what the Action runs)."))
    .requiredOption("--event <file>", "the event payload ($GITHUB_EVENT_PATH)")
    .action(async (opts) => done(await (await import("./github.js")).githubClosed(opts, io)));

  common(program.command("init").description("Write a commented dissent.config.yaml for the models found on this machine."))
    .option("--force", "overwrite an existing dissent.config.yaml")
    .option("--base-url <url>", "an OpenAI-compatible server of your own (vLLM, LM Studio, a gateway): its models are listed when it answers")
    .option("--model <name>", "with --base-url: the server's model that drafts (a judge of another family is picked from what it serves)")
    .action(async (opts) => done(await (await import("./init.js")).initCommand(opts, io)));
  common(program.command("doctor").description("Check every route: reachable, key, model present, JSON mode; exit 1 if any fails.")).action(async (opts) =>
    done(await (await import("./doctor.js")).doctorCommand(opts, io)),
  );

  addExamples(program); // every --help shows what its command is for, by example (src/cli/examples.ts)
  linkDocs(program); // every --help ends with its reference page (docs/README.md maps them)
  return program;
}

/** Parses argv and runs the command; resolves to the exit code. */
export async function run(argv: string[], io: Io): Promise<number> {
  let code = 0;
  const program = buildProgram(io, (c) => (code = c));
  const verbose = argv.includes("--verbose");
  try {
    await program.parseAsync(argv, { from: "user" });
    return code;
  } catch (e) {
    if (e instanceof CommanderError) {
      if (e.code === "commander.helpDisplayed" || e.code === "commander.version" || e.code === "commander.help") return 0;
      if (e.code === "commander.executeSubCommandAsync") return e.exitCode;
      // One line (docs/errors.md): commander's "(Did you mean …?)" joins the message instead of following it.
      const line = e.message
        .replace(/^error: /, "")
        .replace(/\s*\n\s*/g, " ")
        .trim();
      io.stderr(`dissent: error: ${line}\n`);
      return 2;
    }
    return fail(e, io, verbose);
  }
}
