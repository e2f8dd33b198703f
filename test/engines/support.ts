import { readFileSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { join } from "node:path";

/** A running test server on 127.0.0.1. */
export interface TestServer {
  url: string;
  port: number;
  /** `METHOD path [range]` of every request, in order. */
  hits: string[];
  close(): Promise<void>;
}

async function listen(handler: (req: IncomingMessage, res: ServerResponse, body: string) => void | Promise<void>): Promise<TestServer> {
  const hits: string[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    hits.push(`${req.method ?? "GET"} ${req.url ?? ""}${req.headers.range ? ` ${req.headers.range}` : ""}`);
    await handler(req, res, Buffer.concat(chunks).toString("utf8"));
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * A fake Hugging Face endpoint (what node-llama-cpp asks for an `hf:user/repo:QUANT` reference): the
 * manifest naming `<repo>-<QUANT>.gguf`, and that file with Range support. `file(user, repo)` gives the
 * bytes served; undefined answers 404.
 */
export function startFakeHuggingFace(file: (user: string, repo: string) => Buffer | undefined): Promise<TestServer> {
  return listen((req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    const manifest = /^\/v2\/([^/]+)\/([^/]+)\/manifests\/(.+)$/.exec(url.pathname);
    if (manifest) {
      const [, user = "", repo = "", tag = ""] = manifest;
      const body = file(user, repo);
      if (!body) return void res.writeHead(404).end("not found");
      res.writeHead(200, { "content-type": "application/json" });
      return void res.end(JSON.stringify({ ggufFile: { rfilename: `${repo}-${tag}.gguf`, size: body.length } }));
    }
    const resolve = /^\/([^/]+)\/([^/]+)\/resolve\/main\/(.+)$/.exec(url.pathname);
    const body = resolve ? file(resolve[1] ?? "", resolve[2] ?? "") : undefined;
    if (!body) return void res.writeHead(404).end("not found");
    const range = /bytes=(\d+)-(\d*)/.exec(req.headers.range ?? "");
    if (range) {
      const start = Number(range[1]);
      const end = range[2] ? Number(range[2]) : body.length - 1;
      res.writeHead(206, { "content-length": end - start + 1, "content-range": `bytes ${start}-${end}/${body.length}`, "accept-ranges": "bytes" });
      return void res.end(req.method === "HEAD" ? undefined : body.subarray(start, end + 1));
    }
    res.writeHead(200, { "content-length": body.length, "accept-ranges": "bytes", "content-type": "application/octet-stream" });
    res.end(req.method === "HEAD" ? undefined : body);
  });
}

/** One chat-completions request the fake received. */
export interface ChatCall {
  model: string;
  messages: { role: string; content: string }[];
  response_format?: { type: string };
  max_tokens?: number;
  max_completion_tokens?: number;
}

export interface FakeOllama extends TestServer {
  chats: ChatCall[];
}

/**
 * An OpenAI-compatible server with Ollama's /api/tags: `/v1/models` and `/api/tags` list `models`, and
 * `/v1/chat/completions` answers `reply(call)` (a challenger's audit when the request wants JSON).
 * `key`, when given, is required as a Bearer token on /v1/*.
 */
export async function startFakeOllama(o: {
  models: { name: string; family?: string }[];
  reply?: (c: ChatCall) => string;
  key?: string;
  tags?: boolean;
}): Promise<FakeOllama> {
  const chats: ChatCall[] = [];
  const server = await listen((req, res, text) => {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    if (path === "/api/tags" && o.tags !== false)
      return send(200, { models: o.models.map((m) => ({ name: m.name, model: m.name, size: 1000, details: { family: m.family ?? m.name.split(":")[0] } })) });
    if (o.key && path.startsWith("/v1/") && req.headers.authorization !== `Bearer ${o.key}`)
      return send(401, { error: { message: "Incorrect API key provided" } });
    if (path === "/v1/models") return send(200, { object: "list", data: o.models.map((m) => ({ id: m.name, object: "model" })) });
    if (path === "/v1/chat/completions") {
      const call = JSON.parse(text) as ChatCall;
      chats.push(call);
      const content = o.reply ? o.reply(call) : call.response_format ? JSON.stringify({ concerns: [], verdict: "pass" }) : "Four.";
      return send(200, {
        id: "x",
        object: "chat.completion",
        created: 1,
        model: call.model,
        choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
        usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 },
      });
    }
    send(404, { error: { message: `no route ${path}` } });
  });
  return { ...server, chats };
}

/**
 * NODE_OPTIONS that make importing node-llama-cpp fail in a spawned CLI: a run that loads the engine
 * then fails, so a test can tell that a cached run (or `--version`) never loaded it.
 */
export function blockNodeLlamaCpp(dir: string): string {
  const hooks = join(dir, "block-llama-hooks.mjs");
  writeFileSync(
    hooks,
    'export async function resolve(specifier, context, next) {\n  if (specifier === "node-llama-cpp") throw new Error("node-llama-cpp was imported");\n  return next(specifier, context);\n}\n',
  );
  const register = join(dir, "block-llama.mjs");
  writeFileSync(register, `import { register } from "node:module";\nregister(${JSON.stringify(new URL(`file://${hooks}`).href)});\n`);
  return `--import=${new URL(`file://${register}`).href}`;
}

/** Flips one byte of a file in place, far from its header (the model still loads; its hash changes). */
export function flipByte(path: string, fromEnd = 100): void {
  const bytes = readFileSync(path);
  const i = bytes.length - fromEnd;
  bytes[i] = (bytes[i] ?? 0) ^ 0x01;
  writeFileSync(path, bytes);
}
