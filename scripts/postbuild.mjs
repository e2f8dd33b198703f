// After tsc: make the built CLI executable, vendor Chart.js, and bundle the dashboard's page
// (src/web: Preact, bundled by esbuild) into dist/web. No CDN, ever: the package carries it all.
import { chmodSync, copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";

const at = (p) => new URL(`../${p}`, import.meta.url);

chmodSync(at("dist/cli/bin.js"), 0o755);

// Chart.js (a devDependency) is copied into the package at build time: the eval report inlines it,
// the dashboard serves it (fetched only when a chart is drawn).
mkdirSync(at("dist/vendor/"), { recursive: true });
copyFileSync(at("node_modules/chart.js/dist/chart.umd.min.js"), at("dist/vendor/chart.umd.min.js"));

// The dashboard: one bundle (Preact + the app), the CSS and the loader inline in index.html.
const esbuild = await import("esbuild");
mkdirSync(at("dist/web/"), { recursive: true });
const app = await esbuild.build({
  entryPoints: [at("src/web/main.tsx").pathname],
  bundle: true,
  minify: true,
  format: "esm",
  target: ["chrome110", "firefox110", "safari16"],
  jsx: "automatic",
  jsxImportSource: "preact",
  legalComments: "none",
  write: false,
  logLevel: "warning",
});
writeFileSync(at("dist/web/app.js"), app.outputFiles[0].text);
const css = await esbuild.transform(readFileSync(at("src/web/app.css"), "utf8"), { loader: "css", minify: true });
const loader = await esbuild.transform(readFileSync(at("src/web/loader.js"), "utf8"), { loader: "js", minify: true, target: "es2020" });
const html = readFileSync(at("src/web/index.html"), "utf8")
  .replace("/*CSS*/", () => css.code.trim())
  .replace("/*LOADER*/", () => loader.code.trim());
writeFileSync(at("dist/web/index.html"), html);
