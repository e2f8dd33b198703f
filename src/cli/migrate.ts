import { UsageError } from "../errors.js";
import type { Common } from "./common.js";
import type { Io } from "./io.js";

// Scaffolding: the command is registered in main.ts; its body is being written.
export async function migrateCommand(_opts: Common, _io: Io): Promise<number> {
  throw new UsageError("dissent migrate is not available in this build");
}
