import type { Config } from "../contracts/config.js";
import type { Db } from "../store/db.js";
import { localTracker } from "./local.js";
import type { Tracker } from "./port.js";

/** The tracker the config names. The GitHub adapter (and Octokit) is loaded only when used. */
export async function openTracker(config: Config, env: Record<string, string | undefined>, db: Db): Promise<Tracker> {
  if (config.tracker.type === "local") return localTracker(db);
  const { githubTracker } = await import("./github.js");
  return githubTracker(config.tracker, env, config.source);
}
