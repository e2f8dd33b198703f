import { readFileSync } from "node:fs";
import { Command, CommanderError, Option } from "commander";
import { fail, type Io } from "./io.js";

const collect = (value: string, previous: string[]) => [...previous, value];
const version = (JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }).version;

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

  program
    .command("run")
    .description("Executor drafts; with --audit a challenger audits the draft and at most one revision follows (ADR-008/009).")
    .argument("[prompt]", "the prompt; read from stdin when omitted and stdin is not a TTY")
    .option("--audit", "audit the draft with the challenger")
    .option("--json", "print one JSON object: final_output, audit_meta, run")
    .option("--config <file>", "config file (default: $DISSENT_CONFIG, then ./dissent.config.yaml)")
    .option("--constraint <text>", "add a constraint (repeatable)", collect, [])
    .option("--policy <text|file>", "add a policy, as text or a file path (repeatable)", collect, [])
    .addOption(new Option("--no-cache", "do not read or write the reply cache"))
    .option("--replay", "answer only from the cache; fail on any miss, never touch the network")
    .option("--verbose", "list each model call on stderr; stack traces on errors")
    .action(async (prompt: string | undefined, opts) => {
      const { runCommand } = await import("./run.js");
      done(await runCommand(prompt, opts, io));
    });

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
      io.stderr(`dissent: error: ${e.message.replace(/^error: /, "")}\n`);
      return 2;
    }
    return fail(e, io, verbose);
  }
}

