/**
 * Found by the chaos suite: a plan's last steps are "move the outcome label", then "commit the
 * review's events and the cycle's status". A worker stopped between the two left an issue labelled
 * `dissent-ready` whose cycle was still `planning`: `issue plan` refused it as ready, the factory no
 * longer saw it as unfinished, and `issue show` said planning — stuck until a `--replan`. The store's
 * cycle now decides: such a cycle resumes and commits, from the reply cache.
 */
import { describe, expect, it } from "vitest";
import { StoreError } from "../../src/errors.js";
import type { Store } from "../../src/store/port.js";
import { agreeable, scriptedWorld } from "../support/world.js";

describe("a plan stopped between its label move and its commit", () => {
  it("resumes on the next issue plan and commits ready, asking no model again", async () => {
    const w = await scriptedWorld(agreeable);
    const id = await w.newIssue("Retry failed uploads");
    // The cycle's closing commit fails as a killed worker's would: nothing of it lands.
    const stopped: Store = {
      ...w.store,
      transaction: (fn) =>
        w.store.transaction((tx) =>
          fn({ ...tx, savePlan: (row) => (row.status === "planning" ? tx.savePlan(row) : Promise.reject(new StoreError("the worker stopped here"))) }),
        ),
    };
    const first = await w.plan(id, { store: stopped }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(StoreError.isInstance(first), String(first)).toBe(true);
    expect(await w.labels(id)).toContain("dissent-ready");
    expect((await w.store.plan(id))?.status).toBe("planning");
    const asked = w.calls.length;

    const again = await w.plan(id);
    expect(again.status).toBe("ready");
    expect(again.calls).toBe(0); // every reply, the reviewer's included, comes from the cache
    expect(w.calls.length).toBe(asked);
    expect((await w.store.plan(id))?.status).toBe("ready");
    expect(await w.labels(id)).toEqual(["dissent-ready"]);
    // Once committed it is ready like any other: a third run is refused without --replan.
    await expect(w.plan(id)).rejects.toThrow(/is ready \(its plan was reviewed\)/);
  });
});
