import { UsageError } from "../errors.js";
import type { Common } from "./common.js";
import type { Io } from "./io.js";

// Scaffolding: the command is registered in main.ts; its body is being written.
export async function initCommand(_opts: Common, _io: Io): Promise<number> {
  throw new UsageError("dissent init is not available in this build");
}
