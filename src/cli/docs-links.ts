import type { Command } from "commander";
import { packagePath } from "../package-root.js";

/**
 * The reference page of each command (the package ships docs/, so the page is on the user's disk);
 * a subcommand shows its parent's page. docs/README.md is the map of them all.
 */
export const COMMAND_DOCS: Readonly<Record<string, string>> = {
  dissent: "docs/README.md",
  run: "docs/run.md",
  cache: "docs/run.md#the-reply-cache",
  issue: "docs/issue.md",
  implement: "docs/implement.md",
  events: "docs/issue.md#events",
  wiki: "docs/issue.md#carryover-the-wiki",
  eval: "docs/eval.md",
  factory: "docs/factory.md",
  migrate: "docs/factory.md#many-machines-postgresql",
  serve: "docs/serve.md",
  init: "docs/local-engine.md#dissent-init",
  doctor: "docs/local-engine.md#dissent-doctor",
  mcp: "docs/mcp.md",
  github: "docs/github-action.md",
  pr: "docs/github-action.md#reviewing-any-pull-request",
};

/** The line at the bottom of a command's --help: the page by its name, then where that file is here. */
export function docsLine(page: string): string {
  const file = page.split("#")[0] ?? page;
  return `Reference: ${page} (${packagePath(...file.split("/"))})`;
}

/** Adds the reference line to the help of every command that has a page, and of its subcommands. */
export function linkDocs(program: Command): void {
  const visit = (c: Command, inherited: string | undefined) => {
    const page = COMMAND_DOCS[c.name()] ?? inherited;
    if (page) c.addHelpText("after", `\n${docsLine(page)}\n`);
    for (const sub of c.commands) visit(sub, page);
  };
  visit(program, undefined);
}
