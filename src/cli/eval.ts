import { UsageError } from "../errors.js";
import type { Common } from "./common.js";
import type { Io } from "./io.js";

// Scaffolding: the command is registered in main.ts; its body is being written.
export async function evalGate(_opts: Common, _io: Io): Promise<number> {
  throw new UsageError("dissent eval gate is not available in this build");
}
export async function evalPipeline(_opts: Common, _io: Io): Promise<number> {
  throw new UsageError("dissent eval pipeline is not available in this build");
}
export async function evalCompare(_a: string, _b: string, _opts: Common, _io: Io): Promise<number> {
  throw new UsageError("dissent eval compare is not available in this build");
}
