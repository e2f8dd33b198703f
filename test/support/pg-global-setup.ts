/**
 * vitest globalSetup: one PostgreSQL cluster for the whole run, started lazily.
 *
 * Test files run in separate worker processes, so the cluster can't be started
 * "on first use" inside a worker without every worker starting its own. Instead
 * this module (which runs once, in the main vitest process) listens on
 * 127.0.0.1 with a tiny HTTP broker and provides its address as `pgBroker`.
 * `freshDatabase()` (test/support/postgres.ts) POSTs to it; the first request
 * starts the cluster, every request creates a new database and gets its URL.
 * A run without PostgreSQL tests costs one idle socket, no cluster.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { TestProject } from "vitest/node";
import { startPostgres, type PgCluster } from "./postgres.js";

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  let cluster: Promise<PgCluster> | undefined;
  const getCluster = (): Promise<PgCluster> => (cluster ??= startPostgres());

  const reply = (res: ServerResponse, status: number, body: object): void => {
    res.writeHead(status, { "content-type": "application/json", connection: "close" });
    res.end(JSON.stringify(body));
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    if (req.method !== "POST" || req.url !== "/database") return reply(res, 404, { error: "not found" });
    getCluster()
      .then((c) => c.createDatabase())
      .then(
        (url) => reply(res, 200, { url }),
        (err: unknown) => reply(res, 500, { error: err instanceof Error ? err.message : String(err) }),
      );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  project.provide("pgBroker", `http://127.0.0.1:${port}`);

  return async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    if (cluster)
      await cluster.then(
        (c) => c.stop(),
        () => undefined,
      );
  };
}
