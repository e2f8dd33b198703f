/**
 * The one rule for signals (docs/errors.md): the first SIGINT/SIGTERM aborts the run's signal and
 * arms a deadline after which the process exits 130/143 whatever it is still doing; a second signal
 * exits at once. The clock is the test's own: no real waiting, nothing a loaded machine can break.
 */
import { describe, expect, it } from "vitest";
import { signalStopper, STOP_DEADLINE_MS } from "../../src/cli/io.js";
import { Interrupted } from "../../src/errors.js";

/** A stopper on a hand-driven clock: `fire()` runs the armed deadline. */
function harness(deadlineMs = STOP_DEADLINE_MS) {
  const controller = new AbortController();
  const exits: number[] = [];
  const said: string[] = [];
  const timers: { fn: () => void; ms: number; unrefed: boolean }[] = [];
  const stop = signalStopper({
    controller,
    exit: (code) => void exits.push(code),
    say: (line) => void said.push(line),
    deadlineMs,
    setTimer: (fn, ms) => {
      const t = { fn, ms, unrefed: false };
      timers.push(t);
      return { unref: () => (t.unrefed = true) };
    },
  });
  return {
    controller,
    exits,
    said,
    timers,
    stop,
    fire: () => {
      for (const t of timers) t.fn();
    },
  };
}

describe("the first signal starts the orderly stop and a deadline", () => {
  it("SIGTERM aborts with Interrupted(SIGTERM); work that ignores it is ended by the deadline with 143 and one line", () => {
    const h = harness();
    h.stop("SIGTERM");
    expect(h.controller.signal.aborted).toBe(true);
    const reason: unknown = h.controller.signal.reason;
    expect(Interrupted.isInstance(reason) && reason.signal).toBe("SIGTERM");
    expect(h.exits).toEqual([]); // the orderly stop gets its chance first
    expect(h.timers.map((t) => [t.ms, t.unrefed])).toEqual([[STOP_DEADLINE_MS, true]]);
    h.fire();
    expect(h.exits).toEqual([143]);
    expect(h.said).toEqual([`dissent: warning: still stopping ${STOP_DEADLINE_MS / 1000} s after SIGTERM: exiting now`]);
  });

  it("SIGINT: 130 at the deadline; a second signal exits at once, with the first signal's rule for its code", () => {
    const h = harness(2_500);
    h.stop("SIGINT");
    expect(h.exits).toEqual([]);
    h.stop("SIGINT");
    expect(h.exits).toEqual([130]);
    h.stop("SIGTERM");
    expect(h.exits).toEqual([130, 143]);
    expect(h.timers).toHaveLength(1); // one deadline, armed by the first signal only
  });
});
