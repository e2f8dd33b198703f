import { type McpServer, ResourceTemplate } from "@modelcontextprotocol/server";
import type { Dissent } from "../dissent.js";
import { UsageError } from "../errors.js";
import { redactDeep } from "../redact.js";
import { artifactNames } from "./tools.js";

/** The artifacts a resource can name: `issue show --artifact`'s. */
const ARTIFACTS = ["brief", "shape", "plan", "acceptance_criteria"] as const;

const one = (v: string | string[] | undefined) => (Array.isArray(v) ? (v[0] ?? "") : (v ?? ""));

/**
 * dissent's resources (docs/mcp.md): `dissent://issue/{id}` (what `issue show --json` prints) and
 * `dissent://issue/{id}/{artifact}` (one artifact of the latest cycle, as markdown; the criteria as a
 * list). Open issues are listed.
 */
export function registerResources(server: McpServer, dissent: () => Dissent): void {
  server.registerResource(
    "issue",
    new ResourceTemplate("dissent://issue/{id}", {
      list: async () => ({
        resources: (await dissent().issues.list()).map((i) => ({
          uri: `dissent://issue/${i.id}`,
          name: dissent().redact(`#${i.id} ${i.title}`),
          mimeType: "application/json",
        })),
      }),
    }),
    {
      title: "An issue as dissent sees it",
      description: "issue show --json: plan, criteria, pending and addressed concerns, stages",
      mimeType: "application/json",
    },
    async (uri, vars) => {
      const d = dissent();
      const detail = await d.issues.show(one(vars.id));
      return { contents: [{ uri: uri.href, mimeType: "application/json", text: JSON.stringify(redactDeep(detail, d.redact), null, 2) }] };
    },
  );
  server.registerResource(
    "issue-artifact",
    new ResourceTemplate("dissent://issue/{id}/{artifact}", { list: undefined }),
    { title: "One artifact of an issue's latest cycle", description: "brief, shape, plan (markdown) or acceptance_criteria", mimeType: "text/markdown" },
    async (uri, vars) => {
      const d = dissent();
      const name = one(vars.artifact);
      if (!(ARTIFACTS as readonly string[]).includes(name)) throw new UsageError(`the artifact must be one of ${ARTIFACTS.join(", ")}, not '${name}'`);
      const detail = await d.issues.show(one(vars.id));
      if (!artifactNames(detail).includes(name))
        throw new UsageError(`issue ${detail.id} has no ${name.replace("_", " ")} in its latest cycle (plan_issue makes one)`);
      const text =
        name === "acceptance_criteria" ? detail.acceptance_criteria.map((c) => `- ${c}`).join("\n") : (detail[name as "brief" | "shape" | "plan"] ?? "");
      return { contents: [{ uri: uri.href, mimeType: "text/markdown", text: d.redact(text) }] };
    },
  );
}
