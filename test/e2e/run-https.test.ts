/**
 * Model calls over HTTPS, as to a real provider (src/models/http-fetch.ts sends them over node:https
 * with a keep-alive agent): a TLS server on 127.0.0.1 with a certificate made for the test, trusted
 * through NODE_EXTRA_CA_CERTS as a user would trust a corporate CA. The replies come gzip-compressed,
 * as real providers send them; the key travels only in its header and is never printed.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { afterEach, expect, it } from "vitest";
import { audit, CHAL_MODEL, configYaml, EXEC_MODEL, parseJsonOut, world, type World } from "../support/e2e.js";

const KEY = "sk-https-test-5f0c1d2e3a4b";
const DRAFT = "Seven is a prime number.";

let w: World | undefined;
let tls: Server | undefined;
let certDir: string | undefined;
afterEach(async () => {
  await w?.close();
  tls?.closeAllConnections();
  await new Promise((r) => (tls ? tls.close(r) : r(undefined)));
  if (certDir) rmSync(certDir, { recursive: true, force: true });
  w = tls = certDir = undefined;
});

/** A self-signed certificate for 127.0.0.1, made now (never a key kept in the repository). */
function certificate(dir: string): { cert: string; key: string } {
  execFileSync(
    "openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-keyout",
      join(dir, "key.pem"),
      "-out",
      join(dir, "cert.pem"),
      "-days",
      "1",
      "-subj",
      "/CN=127.0.0.1",
      "-addext",
      "subjectAltName=IP:127.0.0.1",
    ],
    { stdio: "ignore" },
  );
  return { cert: join(dir, "cert.pem"), key: join(dir, "key.pem") };
}

it("a run against an HTTPS provider answering gzip: the draft and the audit arrive, the key only in its header, never printed", async () => {
  certDir = mkdtempSync(join(tmpdir(), "dissent-tls-"));
  const files = certificate(certDir);
  const seen: { auth: string | undefined; encoding: string | undefined; model: string }[] = [];
  tls = createServer({ cert: readFileSync(files.cert), key: readFileSync(files.key) }, async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const { model } = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { model: string };
    seen.push({ auth: req.headers.authorization, encoding: req.headers["accept-encoding"], model });
    const content = model === CHAL_MODEL ? audit("pass") : DRAFT;
    const body = gzipSync(
      JSON.stringify({
        id: "chatcmpl-tls",
        object: "chat.completion",
        created: 1,
        model,
        choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
        usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 },
      }),
    );
    res.writeHead(200, { "content-type": "application/json", "content-encoding": "gzip", "content-length": String(body.length) });
    res.end(body);
  });
  await new Promise<void>((r) => tls?.listen(0, "127.0.0.1", r));
  const url = `https://127.0.0.1:${(tls.address() as { port: number }).port}/v1`;
  w = await world(
    () => ({ content: "unused" }),
    () => configYaml({ url, apiKeyEnv: "TLS_PROVIDER_KEY" }),
  );
  const r = await w.run(["run", "--audit", "--json", "Name a prime number."], { env: { NODE_EXTRA_CA_CERTS: files.cert, TLS_PROVIDER_KEY: KEY } });
  const out = parseJsonOut(r);
  expect(out.final_output).toBe(DRAFT);
  expect(out.audit_meta.challenger_status).toBe("ok");
  expect(seen.map((s) => s.model)).toEqual([EXEC_MODEL, CHAL_MODEL]);
  for (const s of seen) {
    expect(s.auth).toBe(`Bearer ${KEY}`);
    expect(s.encoding).toContain("gzip");
  }
  expect(w.server.requests).toHaveLength(0);
  expect(`${r.stdout}${r.stderr}`).not.toContain(KEY);
});
