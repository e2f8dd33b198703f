/**
 * Found by the chaos suite (issue 20): a stage's start event is appended while the stage runs, and
 * awaited only when it ends. The database going away in between made that append an unhandled
 * rejection — a Node crash with a stack instead of the one-line store error. Now the run fails with
 * the store's error, and nothing is left unhandled.
 */
import { describe, expect, it } from "vitest";
import { StoreError } from "../../src/errors.js";
import type { Store } from "../../src/store/port.js";
import { agreeable, scriptedWorld } from "../support/world.js";

describe("the store failing while a stage runs", () => {
  it("the stage's start event failing to append fails the plan with the StoreError, never an unhandled rejection", async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (e: unknown) => void unhandled.push(e);
    process.on("unhandledRejection", onUnhandled);
    try {
      // The producer takes a moment: the start event's append fails while the stage is still running.
      const w = await scriptedWorld(async (call) => {
        if (call.role === "discover.brief") await new Promise((r) => setTimeout(r, 100));
        return agreeable(call);
      });
      const id = await w.newIssue("Retry failed uploads");
      const lost: Store = {
        ...w.store,
        append: (events) =>
          events.some((e) => e.type === "AdversarialStageStarted") ? Promise.reject(new StoreError("the database went away")) : w.store.append(events),
      };
      const failure = await w.plan(id, { store: lost }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(StoreError.isInstance(failure), String(failure)).toBe(true);
      expect(unhandled).toEqual([]);
    } finally {
      process.off("unhandledRejection", onUnhandled);
    }
  });
});
