import { UsageError } from "../errors.js";
import type { Common } from "./common.js";
import type { Io } from "./io.js";

// Scaffolding: the command is registered in main.ts; its body is being written.
export async function serveCommand(_opts: Common, _io: Io): Promise<number> {
  throw new UsageError("dissent serve is not available in this build");
}
