import { Interrupted } from "../errors.js";

/**
 * A tool call's own abort signal: the client's cancellation (`notifications/cancelled`, or a closed
 * HTTP stream) becomes an Interrupted, so the pipeline stops as on Ctrl-C (docs/mcp.md): labels
 * cleared, lease released, resumable from the cache.
 */
export function cancelled(client: AbortSignal): { signal: AbortSignal; done: () => void } {
  const controller = new AbortController();
  const stop = () => controller.abort(new Interrupted("cancelled by the MCP client"));
  if (client.aborted) stop();
  else client.addEventListener("abort", stop, { once: true });
  return { signal: controller.signal, done: () => client.removeEventListener("abort", stop) };
}

/**
 * Work per issue that later calls wait for: a plan that was cancelled keeps stopping (labels, lease)
 * after its request has gone, and the next call on that issue must see the issue as it leaves it.
 */
export function issueQueue(): { run<T>(issue: string, work: () => Promise<T>): Promise<T>; settled(issue: string): Promise<void> } {
  const last = new Map<string, Promise<unknown>>();
  const key = (issue: string) => issue.replace(/^#/, "");
  return {
    run(issue, work) {
      const before = last.get(key(issue)) ?? Promise.resolve();
      const next = before.then(work, work);
      last.set(
        key(issue),
        next.then(
          () => undefined,
          () => undefined,
        ),
      );
      return next;
    },
    async settled(issue) {
      await last.get(key(issue));
    },
  };
}
