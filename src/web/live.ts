import { useEffect, useRef, useState } from "preact/hooks";
import type { ServedEvent } from "../read-models/types.js";
import { authHeaders, getJson, tokenRefused } from "./api.js";

/** Whether the stream is up. */
export type LiveStatus = "connecting" | "live" | "reconnecting";

type Listener = (e: ServedEvent) => void;

const listeners = new Set<Listener>();
const statusListeners = new Set<(s: LiveStatus) => void>();
let lastSeq = 0;
let status: LiveStatus = "connecting";

/** What tests and the benchmark read: when each event reached the page, and when each view drew. */
export interface Probe {
  events: { seq: number; type: string; at: string; received: number }[];
  rendered: { view: string; seq: number; at: number }[];
}
export const probe: Probe = { events: [], rendered: [] };
(window as unknown as { __dissent: Probe }).__dissent = probe;

function setStatus(s: LiveStatus): void {
  status = s;
  for (const l of statusListeners) l(s);
}

function dispatch(block: string): void {
  let id: string | undefined;
  const data: string[] = [];
  for (const line of block.split("\n")) {
    if (line.startsWith("id:")) id = line.slice(3).trim();
    else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
  }
  if (!data.length) return;
  const e = JSON.parse(data.join("\n")) as ServedEvent;
  lastSeq = Math.max(lastSeq, Number(id ?? e.seq));
  probe.events.push({ seq: e.seq, type: e.type, at: e.at, received: Date.now() });
  if (probe.events.length > 2000) probe.events.splice(0, 1000);
  for (const l of listeners) l(e);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Follows /api/events/stream over fetch (EventSource cannot send the token) and reconnects with
 * Last-Event-ID, so an event committed while the connection was down still arrives.
 */
async function follow(): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      const headers: Record<string, string> = { ...authHeaders(), accept: "text/event-stream" };
      if (lastSeq > 0) headers["last-event-id"] = String(lastSeq);
      const res = await fetch("/api/events/stream", { headers, cache: "no-store" });
      if (res.status === 401) return tokenRefused();
      if (!res.ok || !res.body) throw new Error(`HTTP ${res.status}`);
      attempt = 0;
      setStatus("live");
      // No read-again: the stream starts after the `seq` the first view read (then after the last event
      // received), so anything committed since arrives on it.
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value.replace(/\r\n?/g, "\n");
        for (let i = buffer.indexOf("\n\n"); i >= 0; i = buffer.indexOf("\n\n")) {
          dispatch(buffer.slice(0, i));
          buffer = buffer.slice(i + 2);
        }
      }
    } catch (e) {
      console.warn("dissent: the event stream broke; reconnecting", e);
    }
    setStatus("reconnecting");
    await sleep(Math.min(5000, 250 * 2 ** Math.min(attempt, 5)));
  }
}

/** Starts following once, after the first view has its data (so the stream never slows the first paint). */
let started = false;
export function startLive(seq: number): void {
  if (started) return;
  started = true;
  lastSeq = Math.max(lastSeq, seq);
  void follow();
}

export function onEvent(fn: Listener): () => void {
  listeners.add(fn);
  return () => void listeners.delete(fn);
}

export function useLiveStatus(): LiveStatus {
  const [s, set] = useState(status);
  useEffect(() => {
    statusListeners.add(set);
    return () => void statusListeners.delete(set);
  }, []);
  return s;
}

/** A view's data: read from the API, read again (at most every `gapMs`) when a relevant event arrives. */
export function useData<T extends object>(
  path: string,
  relevant: (e: ServedEvent) => boolean,
  gapMs = 150,
): { data: T | undefined; error: string | undefined } {
  const [state, setState] = useState<{ path: string; data: T | undefined; error: string | undefined }>({ path, data: undefined, error: undefined });
  const relevantRef = useRef(relevant);
  relevantRef.current = relevant;
  useEffect(() => {
    let alive = true;
    let inFlight = false;
    let dirty = false;
    let last = 0;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const load = async () => {
      inFlight = true;
      dirty = false;
      last = Date.now();
      try {
        const data = await getJson<T>(path);
        if (alive) setState({ path, data, error: undefined });
        const seq = (data as { last_seq?: unknown }).last_seq;
        if (typeof seq === "number") startLive(seq);
      } catch (e) {
        if (alive) setState((s) => ({ ...s, path, error: e instanceof Error ? e.message : String(e) }));
      } finally {
        inFlight = false;
        if (alive && dirty) schedule();
      }
    };
    const schedule = () => {
      if (inFlight) {
        dirty = true;
        return;
      }
      if (timer) return;
      const wait = Math.max(0, gapMs - (Date.now() - last));
      timer = setTimeout(() => {
        timer = undefined;
        void load();
      }, wait);
    };
    void load();
    const off = onEvent((e) => {
      if (relevantRef.current(e)) schedule();
    });
    return () => {
      alive = false;
      off();
      if (timer) clearTimeout(timer);
    };
  }, [path, gapMs]);
  return state.path === path ? { data: state.data, error: state.error } : { data: undefined, error: undefined };
}

/** Marks a view as drawn with the store's `seq` it shows (tests and the benchmark wait on this). */
export function useRendered(view: string, seq: number | undefined): void {
  useEffect(() => {
    if (seq === undefined) return;
    document.body.dataset.view = view;
    document.body.dataset.seq = String(seq);
    probe.rendered.push({ view, seq, at: Date.now() });
    if (probe.rendered.length > 2000) probe.rendered.splice(0, 1000);
    performance.mark(`dissent:${view}:${seq}`);
  }, [view, seq]);
}
