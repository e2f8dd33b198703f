import { AsyncLocalStorage } from "node:async_hooks";
import type { ObservedCall } from "../models/types.js";

/** What a tool call is told of while it runs: the model calls it made, the warnings it raised. */
export interface ToolScope {
  call?: (c: ObservedCall) => void;
  warn?: (message: string) => void;
}

/**
 * The tool call that work belongs to. A server answers several tool calls at once, and the instance's
 * one `onCall` and `onWarning` hooks see everything: the async context the work runs in says whose it is.
 */
const current = new AsyncLocalStorage<ToolScope>();

/** Runs `work` with `scope` added to the one it runs in. */
export function inScope<T>(scope: ToolScope, work: () => Promise<T>): Promise<T> {
  return current.run({ ...current.getStore(), ...scope }, work);
}

/** The `onCall` hook of the instance `dissent mcp` serves (cli/mcp.ts): a finished model call, told to the tool call that made it. */
export function observeCall(c: ObservedCall): void {
  current.getStore()?.call?.(c);
}

/** The `onWarning` hook's other half (cli/mcp.ts): a warning, told to the client of the tool call that raised it. */
export function observeWarning(message: string): void {
  current.getStore()?.warn?.(message);
}
