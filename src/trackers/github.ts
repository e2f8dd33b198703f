import type { TrackerConfig } from "../contracts/config.js";
import { ConfigError } from "../errors.js";
import type { Tracker } from "./port.js";

/** Placeholder until the GitHub adapter lands (issue #6). */
export function githubTracker(config: Extract<TrackerConfig, { type: "github" }>, _env: Record<string, string | undefined>, source: string): Tracker {
  throw new ConfigError(`${source}: tracker type github (${config.repo}) is not available yet`);
}
