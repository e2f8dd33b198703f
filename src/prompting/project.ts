import type { ProjectContext } from "../contracts/config.js";
import { isFatal, messageOf } from "../errors.js";

/**
 * The text of the `project` data block every pipeline role is given (docs/configuration.md): the
 * project's name and description. `project.context_files` are not pasted here whole: they are ranked
 * and chunked with the repository's code, and each request carries the parts of them that bear on it
 * (src/pipeline/code-context.ts). Undefined when the config names neither, so requests without a
 * project stay as they were. Deterministic: the same config gives the same bytes.
 */
export function projectText(p: ProjectContext): string | undefined {
  const head = [p.name ? `Project: ${p.name}` : "", p.description ? `Description: ${p.description}` : ""].filter(Boolean);
  return head.length ? head.join("\n") : undefined;
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
