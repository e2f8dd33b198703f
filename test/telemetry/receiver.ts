import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** An OTLP attribute value as the JSON encoding writes it. */
export interface AnyValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values?: AnyValue[] };
}
export interface KeyValue {
  key: string;
  value: AnyValue;
}
export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string | number;
  endTimeUnixNano: string | number;
  attributes?: KeyValue[];
  events?: { name: string; timeUnixNano: string | number; attributes?: KeyValue[] }[];
  status?: { code?: number; message?: string };
}

/** A span with its attributes read into plain values. */
export interface Span extends Omit<OtlpSpan, "attributes" | "events"> {
  attrs: Record<string, unknown>;
  events: { name: string; attrs: Record<string, unknown> }[];
  resource: Record<string, unknown>;
}

const attrValue = (v: AnyValue): unknown =>
  v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : undefined) ?? v.doubleValue ?? v.boolValue ?? v.arrayValue?.values?.map(attrValue);
const attrsOf = (list: KeyValue[] = []) => Object.fromEntries(list.map((kv) => [kv.key, attrValue(kv.value)]));

/** A local OTLP/HTTP receiver (JSON): what a collector would get. */
export interface Receiver {
  url: string;
  /** Every request body as received (to search for text that must not be there). */
  bodies: string[];
  contentTypes: string[];
  spans(): Span[];
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const bodies: string[] = [];
  const contentTypes: string[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      if (req.url === "/v1/traces" && req.method === "POST") {
        bodies.push(Buffer.concat(chunks).toString("utf8"));
        contentTypes.push(String(req.headers["content-type"]));
        res.writeHead(200, { "content-type": "application/json" }).end("{}");
      } else res.writeHead(404).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    bodies,
    contentTypes,
    spans() {
      const out: Span[] = [];
      for (const body of bodies) {
        const doc = JSON.parse(body) as { resourceSpans?: { resource?: { attributes?: KeyValue[] }; scopeSpans?: { spans?: OtlpSpan[] }[] }[] };
        for (const rs of doc.resourceSpans ?? []) {
          for (const ss of rs.scopeSpans ?? []) {
            for (const sp of ss.spans ?? []) {
              const { attributes, events, ...rest } = sp;
              out.push({
                ...rest,
                attrs: attrsOf(attributes),
                events: (events ?? []).map((e) => ({ name: e.name, attrs: attrsOf(e.attributes) })),
                resource: attrsOf(rs.resource?.attributes),
              });
            }
          }
        }
      }
      return out;
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
