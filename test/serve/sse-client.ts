import type { ServedEvent } from "../../src/read-models.js";

/** One event as a stream client received it. */
export interface Received {
  id: number;
  event: ServedEvent;
  /** Date.now() when it arrived. */
  at: number;
}

/** A server-sent-events client over fetch (as the page's): collects every event until closed. */
export interface StreamClient {
  events: Received[];
  /** Resolves when the response headers arrived. */
  opened: Promise<number>;
  /** Ends the connection (as a dropped network would). */
  close(): void;
  /** Resolves when the stream ended (closed by either side). */
  ended: Promise<void>;
  /** Why it ended, when the server cut the connection instead of ending the response. */
  error(): unknown;
}

export function openStream(url: string, headers: Record<string, string> = {}): StreamClient {
  const abort = new AbortController();
  const events: Received[] = [];
  let failure: unknown;
  let opened: (status: number) => void = () => undefined;
  const openedP = new Promise<number>((r) => (opened = r));
  const ended = (async () => {
    try {
      const res = await fetch(url, { headers: { accept: "text/event-stream", ...headers }, signal: abort.signal });
      opened(res.status);
      if (!res.ok || !res.body) return;
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buffer += value;
        for (let i = buffer.indexOf("\n\n"); i >= 0; i = buffer.indexOf("\n\n")) {
          const block = buffer.slice(0, i);
          buffer = buffer.slice(i + 2);
          const id = /^id: ?(.*)$/m.exec(block)?.[1];
          const data = [...block.matchAll(/^data: ?(.*)$/gm)].map((m) => m[1]).join("\n");
          if (id !== undefined && data) events.push({ id: Number(id), event: JSON.parse(data) as ServedEvent, at: Date.now() });
        }
      }
    } catch (e) {
      if (!abort.signal.aborted) failure = e; // a close() of ours ends it quietly; anything else is kept for the test to see
    }
  })();
  return { events, opened: openedP, close: () => abort.abort(), ended, error: () => failure };
}
