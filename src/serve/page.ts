import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { packagePath } from "../package-root.js";
import type { Hono } from "hono";

/** The built page: the HTML shell (CSS and loader inline), the app bundle and Chart.js. */
export interface PageAssets {
  html: string;
  app: string;
  chart: string | undefined;
  /** The Content-Security-Policy that lets exactly the shell's inline code run. */
  csp: string;
}

/** Where `npm run build` puts the page: dist/web beside dist/serve, or dist/web of the checkout when run from src. */
function webDir(explicit?: string): string | undefined {
  const candidates = explicit ? [explicit] : [packagePath("dist", "web")];
  return candidates.find((d) => existsSync(`${d.replace(/\/$/, "")}/index.html`));
}

const sha256 = (text: string) => `'sha256-${createHash("sha256").update(text).digest("base64")}'`;

/** Reads the built page once; undefined when it was not built (the API still answers). */
export function loadPage(dir?: string): PageAssets | undefined {
  const d = webDir(dir);
  if (!d) return undefined;
  const root = d.replace(/\/$/, "");
  const html = readFileSync(`${root}/index.html`, "utf8");
  const app = readFileSync(`${root}/app.js`, "utf8");
  const chartFile = `${root}/../vendor/chart.umd.min.js`;
  const chart = existsSync(chartFile) ? readFileSync(chartFile, "utf8") : undefined;
  const scripts = [...html.matchAll(/<script[^>]*>([\s\S]*?)<\/script>/g)].map((m) => sha256(m[1] ?? ""));
  // The loader imports the bundle from a blob: URL it fetched with the token (a script tag cannot send one).
  const csp = [
    "default-src 'none'",
    `script-src ${[...scripts, "blob:"].join(" ")}`,
    // Inline style attributes (Preact's style={…}, Chart.js's canvas sizing) need 'unsafe-inline'; no script can use it.
    "style-src 'unsafe-inline'",
    "connect-src 'self'",
    "img-src 'self' data:",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join("; ");
  return { html, app, chart, csp };
}

/** Serves the page's files; every figure on it comes from /api/. */
export function pageRoutes(app: Hono, page: PageAssets | undefined): void {
  const etag = (text: string) => `"${createHash("sha256").update(text).digest("hex").slice(0, 16)}"`;
  const file = (path: string, body: () => string | undefined, type: string) => {
    app.get(path, (c) => {
      const text = body();
      if (text === undefined) return c.json({ error: "the dashboard page is not built: run npm run build (the JSON API under /api/ works without it)" }, 404);
      const tag = etag(text);
      if (c.req.header("if-none-match") === tag) return c.body(null, 304);
      c.header("ETag", tag);
      c.header("Cache-Control", "no-cache");
      c.header("Content-Type", type);
      return c.body(text);
    });
  };
  file("/", () => page?.html, "text/html; charset=utf-8");
  file("/assets/app.js", () => page?.app, "text/javascript; charset=utf-8");
  file("/assets/chart.js", () => page?.chart, "text/javascript; charset=utf-8");
}
