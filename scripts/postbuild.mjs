// After tsc: bundle the CLI and make it executable, vendor Chart.js, and bundle the dashboard's page
// (src/web: Preact, bundled by esbuild) into dist/web. No CDN, ever: the package carries it all.
import { chmodSync, copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";

const at = (p) => new URL(`../${p}`, import.meta.url);
const esbuild = await import("esbuild");

// The library's modules (tsc's output) lose their comments, and non-ASCII characters are escaped: V8
// keeps every loaded module's source text on the heap for its whole life, two bytes a character when
// one character is not Latin-1 (an em dash in a comment). Importing "dissent" kept ~0.4 MB of source
// text; it keeps ~0.2 MB now (docs/library.md "What it costs"). The code itself is reprinted, not
// minified; the declarations keep their doc comments, the source maps still lead to src/.
const BUNDLED = new Set(["dist/cli/", "dist/web/", "dist/vendor/"]);
const libraryModules = (dir) =>
  readdirSync(at(dir), { withFileTypes: true }).flatMap((e) => {
    if (e.isDirectory()) return BUNDLED.has(`${dir}${e.name}/`) ? [] : libraryModules(`${dir}${e.name}/`);
    return e.name.endsWith(".js") ? [at(`${dir}${e.name}`).pathname] : [];
  });
await esbuild.build({
  entryPoints: libraryModules("dist/"),
  outdir: at("dist/").pathname,
  outbase: at("dist/").pathname,
  allowOverwrite: true,
  bundle: false,
  format: "esm",
  platform: "node",
  target: "node20",
  charset: "ascii",
  legalComments: "none",
  sourcemap: "linked",
  sourcesContent: false,
  logLevel: "warning",
});
// esbuild escapes strings but not regex literals, nor the comments it keeps inside expressions (a
// schema's field docs): one `’` or `…` there and V8 keeps the whole module's text at two bytes a
// character. `\u2019` is the same character in a regex and harmless in a comment.
for (const file of libraryModules("dist/")) {
  const text = readFileSync(file, "utf8");
  const escaped = text.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
  if (escaped !== text) writeFileSync(file, escaped);
}

// The CLI: one ESM bundle of dissent's own code and the few packages every command loads (zod,
// commander, yaml, p-limit), with each lazily imported command in a chunk of its own. Node's module
// loader then opens a handful of files instead of ~140, which is most of a fully cached run's time.
// Every other package (the AI SDK, Octokit, pg, OpenTelemetry, native addons) stays a package import.
const INLINE = new Set(["zod", "commander", "yaml", "p-limit", "yocto-queue"]);
const packageName = (spec) => (spec.startsWith("@") ? spec.split("/").slice(0, 2).join("/") : spec.split("/")[0]);
rmSync(at("dist/cli/chunks/"), { recursive: true, force: true });
await esbuild.build({
  entryPoints: { bin: at("src/cli/bin.ts").pathname },
  outdir: at("dist/cli/").pathname,
  allowOverwrite: true,
  chunkNames: "chunks/[name]-[hash]",
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  legalComments: "none",
  logLevel: "warning",
  // Inlined CommonJS (commander) requires Node's own modules: give every file a real `require`.
  banner: { js: 'import { createRequire as __dissentCreateRequire } from "node:module"; const require = __dissentCreateRequire(import.meta.url);' },
  plugins: [
    {
      name: "packages-stay-packages",
      setup(build) {
        // The library loads yaml on the first config file read (src/config/yaml.ts); the CLI inlines it.
        build.onResolve({ filter: /^\.\/yaml\.js$/ }, (args) =>
          args.importer.endsWith("/src/config/load.ts") ? { path: at("src/config/yaml-inline.ts").pathname } : undefined,
        );
        build.onResolve({ filter: /^[^./]/ }, (args) => {
          if (args.path.startsWith("node:") || INLINE.has(packageName(args.path))) return undefined;
          return { path: args.path, external: true };
        });
      },
    },
  ],
});
chmodSync(at("dist/cli/bin.js"), 0o755);
// tsc's one-file-per-module output of src/cli is now inside the bundle: drop it, so the package holds one CLI.
for (const name of readdirSync(at("dist/cli/"))) {
  if (name !== "bin.js" && name !== "chunks" && /\.(js|d\.ts)(\.map)?$/.test(name)) rmSync(at(`dist/cli/${name}`));
}

// Chart.js (a devDependency) is copied into the package at build time: the eval report inlines it,
// the dashboard serves it (fetched only when a chart is drawn).
mkdirSync(at("dist/vendor/"), { recursive: true });
copyFileSync(at("node_modules/chart.js/dist/chart.umd.min.js"), at("dist/vendor/chart.umd.min.js"));

// tree-sitter (a devDependency, ADR-032): the WebAssembly runtime and the grammars of the languages the
// repository map parses are copied into the package, the grammars gzipped (a quarter of their size);
// the package's other grammars (C#, C++, Ruby, PHP, PowerShell, Bash: ~16 MB) stay out.
const TS = "node_modules/@vscode/tree-sitter-wasm/";
mkdirSync(at("dist/vendor/tree-sitter/"), { recursive: true });
// The runtime is CommonJS (UMD): .cjs, or the package's "type": "module" would make Node read it as ESM.
copyFileSync(at(`${TS}wasm/tree-sitter.js`), at("dist/vendor/tree-sitter/tree-sitter.cjs"));
for (const f of ["wasm/tree-sitter.wasm", "LICENSE"]) copyFileSync(at(`${TS}${f}`), at(`dist/vendor/tree-sitter/${f.replace("wasm/", "")}`));
const { gzipSync } = await import("node:zlib");
for (const lang of ["typescript", "tsx", "javascript", "python", "go", "rust", "java"])
  writeFileSync(at(`dist/vendor/tree-sitter/tree-sitter-${lang}.wasm.gz`), gzipSync(readFileSync(at(`${TS}wasm/tree-sitter-${lang}.wasm`)), { level: 9 }));

// The dashboard: one bundle (Preact + the app), the CSS and the loader inline in index.html.
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
