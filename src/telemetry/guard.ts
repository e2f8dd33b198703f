import { messageOf } from "../errors.js";

/**
 * Telemetry never fails a run (docs/serve.md): a hook that throws is reported once, by `warn`, and
 * the run goes on without that span.
 */
export function guard(warn: (message: string) => void): <A>(fn: (a: A) => void) => (a: A) => void {
  let warned = false;
  return (fn) => (a) => {
    try {
      fn(a);
    } catch (e) {
      if (!warned) warn(`telemetry: a span could not be recorded (${messageOf(e)}); the run goes on`);
      warned = true;
    }
  };
}
