import type { ProjectContext } from "../contracts/config.js";
import { isFatal, messageOf } from "../errors.js";

/**
 * The text of the `project` data block every pipeline role is given (docs/configuration.md):
 * the project's name and description, then each context file under its path. Undefined when the
 * config names nothing, so requests without a project stay as they were. Deterministic: the same
 * config gives the same bytes, which keeps replans served from the reply cache.
 */
export function projectText(p: ProjectContext): string | undefined {
  const head = [p.name ? `Project: ${p.name}` : "", p.description ? `Description: ${p.description}` : ""].filter(Boolean);
  const files = p.files.filter((f) => f.text !== "").map((f) => `## ${f.path}\n\n${f.text}`);
  const parts = [...(head.length ? [head.join("\n")] : []), ...files];
  return parts.length ? parts.join("\n\n") : undefined;
}

/**
 * The project of a planning run: the config's `project`, with its name and description defaulting to
 * the tracker's (GitHub: the repository's). A tracker that cannot say costs one warning, never the run.
 */
export async function projectFor(
  config: ProjectContext,
  tracker: { project?: () => Promise<{ name: string; description: string | null }> },
  warn: (message: string) => void,
): Promise<ProjectContext> {
  if ((config.name && config.description) || !tracker.project) return config;
  try {
    const t = await tracker.project();
    return { ...config, name: config.name ?? t.name, description: config.description ?? t.description };
  } catch (e) {
    if (isFatal(e)) throw e; // a refused token stops the run anyway: say that, not this
    warn(`the project's name and description could not be read from the tracker (${messageOf(e).split("\n")[0]}): planning without them`);
    return config;
  }
}
