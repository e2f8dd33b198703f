import { Transform, type TransformCallback } from "node:stream";

/** How much of an over-size message is kept to find its id: its first and last bytes. */
const KEEP = 4096;
/** `{"jsonrpc":"2.0","id":5,…` — an id at the start of the message is a top-level one. */
const HEAD_ID = /^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(-?\d{1,16}|"(?:[^"\\]|\\.){0,256}")/;
/** `…,"id":5}` — an id right before the message's last brace is a top-level one (a nested object would close after it). */
const TAIL_ID = /[,{]\s*"id"\s*:\s*(-?\d{1,16}|"(?:[^"\\]|\\.){0,256}")\s*\}\s*$/;

/** The id of a JSON-RPC message known only by its first and last bytes, or null when neither shows it. */
export function idOf(head: string, tail: string): string | number | null {
  const m = HEAD_ID.exec(head) ?? TAIL_ID.exec(tail);
  if (!m?.[1]) return null;
  try {
    const id: unknown = JSON.parse(m[1]);
    return typeof id === "string" || typeof id === "number" ? id : null;
  } catch {
    return null;
  }
}

/** A message that was over the bound: its size and what could be read of its id. */
export interface Refused {
  bytes: number;
  id: string | number | null;
}

/**
 * stdin as the stdio transport reads it, one line per JSON-RPC message (docs/mcp.md "stdio"): a line
 * longer than `maxBytes` is never buffered whole — its bytes are counted and dropped, its id read from
 * its first and last bytes — and `refuse` is told of it, so the server answers it and goes on serving.
 * (The SDK's own read buffer, met by such a message, closes the transport: the server would exit 0,
 * silently, as if the client had hung up.)
 */
export class BoundedLines extends Transform {
  private parts: Buffer[] = [];
  private size = 0;
  private over = false;
  private head = "";
  private tail: Buffer = Buffer.alloc(0);

  constructor(
    private readonly maxBytes: number,
    private readonly refuse: (r: Refused) => void,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(10, start);
      const piece = chunk.subarray(start, nl === -1 ? chunk.length : nl);
      this.count(piece);
      if (nl === -1) break;
      this.endLine();
      start = nl + 1;
    }
    done();
  }

  private count(piece: Buffer): void {
    if (!this.over && this.size + piece.length > this.maxBytes) {
      this.over = true;
      this.head = Buffer.concat([...this.parts, piece.subarray(0, KEEP)])
        .subarray(0, KEEP)
        .toString("utf8");
      this.parts = [];
    }
    this.size += piece.length;
    if (!this.over) this.parts.push(piece);
    else this.tail = Buffer.concat([this.tail, piece.subarray(-KEEP)]).subarray(-KEEP);
  }

  private endLine(): void {
    if (this.over) this.refuse({ bytes: this.size, id: idOf(this.head, this.tail.toString("utf8")) });
    else this.push(Buffer.concat([...this.parts, Buffer.from("\n")]));
    this.parts = [];
    this.size = 0;
    this.over = false;
    this.head = "";
    this.tail = Buffer.alloc(0);
  }
}

/** The JSON-RPC error line an over-size message is answered with (-32600, Invalid Request). */
export function refusedLine(r: Refused, maxBytes: number): string {
  const message = `dissent: error: the message is ${r.bytes} bytes, over the limit of ${maxBytes} (mcp.max_message_bytes, docs/limits.md)`;
  return `${JSON.stringify({ jsonrpc: "2.0", id: r.id, error: { code: -32600, message } })}\n`;
}
