import type { Chart, ChartConfiguration } from "chart.js";
import { useEffect, useRef, useState } from "preact/hooks";
import { authHeaders } from "../api.js";

type ChartClass = typeof Chart;
let loading: Promise<ChartClass> | undefined;

/**
 * Chart.js, vendored into the package at build time (no CDN), fetched with the token only when a
 * chart is first drawn: the board never waits for it.
 */
function loadChart(): Promise<ChartClass> {
  loading ??= (async () => {
    const res = await fetch("/assets/chart.js", { headers: authHeaders() });
    if (!res.ok) throw new Error(`Chart.js did not load (HTTP ${res.status})`);
    const url = URL.createObjectURL(new Blob([await res.text()], { type: "text/javascript" }));
    await new Promise<void>((resolve, reject) => {
      const s = document.createElement("script");
      s.src = url;
      s.onload = () => resolve();
      s.onerror = () => reject(new Error("Chart.js did not run"));
      document.head.append(s);
    });
    const C = (window as unknown as { Chart?: ChartClass }).Chart;
    if (!C) throw new Error("Chart.js did not define Chart");
    return C;
  })();
  return loading;
}

/** The height of a chart of `rows` bars side by side: room for every label (at least the 260 px a few bars take). */
export const barsHeight = (rows: number) => Math.max(260, 60 + 18 * rows);

/** One chart; redrawn in place when its data changes. `height` in px (a bar chart of many names needs more). */
export function ChartBox({ config, label, height = 260 }: { config: ChartConfiguration; label: string; height?: number }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const chart = useRef<Chart | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  useEffect(() => {
    let alive = true;
    loadChart().then(
      (C) => {
        if (!alive || !canvas.current) return;
        if (chart.current) {
          chart.current.data = config.data;
          chart.current.update("none");
        } else chart.current = new C(canvas.current, { ...config, options: { animation: false, maintainAspectRatio: false, ...config.options } });
      },
      (e: unknown) => setError(e instanceof Error ? e.message : String(e)),
    );
    return () => {
      alive = false;
    };
  }, [config]);
  useEffect(() => () => chart.current?.destroy(), []);
  return (
    <div class="panel">
      <h3>{label}</h3>
      {error ? <p class="error">{error}</p> : null}
      <div class="chart" style={{ height: `${height}px` }}>
        <canvas ref={canvas} aria-label={label} role="img" data-chart={label} />
      </div>
    </div>
  );
}
