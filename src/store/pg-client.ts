import type { Pool, PoolClient } from "pg";

/** A pooled connection held across awaits, and how to give it back. */
export interface HeldClient {
  client: PoolClient;
  /** The connection error seen while it was held (the server shut down, the network dropped), if any. */
  lost(): Error | undefined;
  /** Gives it back; a connection that failed (or that `broken` says is unusable) is discarded, not returned to the pool. */
  release(broken?: Error): void;
}

/**
 * Checks a connection out of `pool` with an 'error' listener for as long as it is held. pg-pool
 * listens for errors only on idle connections: one held between statements (a transaction, a
 * factory round's job) that the server closes (`pg_ctl -m fast`: 57P01) would otherwise emit an
 * unhandled 'error' event and crash the process with a stack instead of one line (issue 20 item 1).
 */
export async function checkout(pool: Pool, onLost?: (e: Error) => void): Promise<HeldClient> {
  let failure: Error | undefined;
  const listener = (e: Error) => {
    if (failure) return;
    failure = e;
    onLost?.(e);
  };
  // The callback form: the listener is on before the pool's hand-over returns. With the promise form
  // an error in the same network chunk as the hand-over (the server shutting down just then) would
  // find no listener — the chaos suite caught that crash.
  const client = await new Promise<PoolClient>((resolve, reject) =>
    pool.connect((err, c) => {
      if (err || !c) return reject(err ?? new Error("the pool gave no connection"));
      c.on("error", listener);
      resolve(c);
    }),
  );
  let released = false;
  return {
    client,
    lost: () => failure,
    release(broken) {
      if (released) return;
      released = true;
      client.off("error", listener);
      client.release(failure ?? broken);
    },
  };
}
