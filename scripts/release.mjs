// npm run release [-- --out DIR] [-- --no-build] [-- --json]: builds, then packs dissent-<version>.tgz
// into the repository's root (or DIR) — the package as a user installs it before, and without, a
// registry: `npm install /path/to/dissent-<version>.tgz` in any folder gives the `dissent` binary, the
// library, the reference pages and the demo server of the README's Quickstart. Nothing is published;
// the tarball is the release (README.md, "Install"). --json prints npm pack's record of it (the
// install test packs through this script, so it tests what a release holds).
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const args = process.argv.slice(2);
const at = args.indexOf("--out");
const out = at === -1 ? root : resolve(args[at + 1] ?? "");
for (const a of args) if (a.startsWith("--") && !["--out", "--no-build", "--json"].includes(a)) throw new Error(`release: unknown option ${a}`);
if (at !== -1 && !args[at + 1]) throw new Error("release: --out needs a folder");
const { name, version } = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const npm = process.platform === "win32" ? "npm.cmd" : "npm";
const run = (args) => execFileSync(npm, args, { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], shell: process.platform === "win32" });

// A fresh build, so the tarball never carries a dist/ older than the source it ships beside.
if (!args.includes("--no-build"))
  execFileSync(npm, ["run", "build"], { cwd: root, stdio: ["ignore", "ignore", "inherit"], shell: process.platform === "win32" });
const [packed] = JSON.parse(run(["pack", "--ignore-scripts", "--json", "--pack-destination", out]));
const paths = new Set(packed.files.map((f) => f.path));

// What the README's Quickstart and the reference pages need from inside the package.
const needed = [
  "dist/cli/bin.js",
  "dist/index.js",
  "examples/demo-server.mjs",
  "examples/demo.config.yaml",
  "docs/README.md",
  "README.md",
  "prompts/challenger.md",
];
const missing = needed.filter((p) => !paths.has(p));
if (missing.length) {
  process.stderr.write(`release: error: ${packed.filename} lacks ${missing.join(", ")}: check "files" in package.json\n`);
  process.exit(1);
}

const tarball = join(out, packed.filename);
if (args.includes("--json")) {
  process.stdout.write(`${JSON.stringify(packed)}\n`);
  process.exit(0);
}
process.stdout.write(
  [
    `${name} ${version}: ${tarball} (${(packed.size / 1e6).toFixed(2)} MB, ${packed.entryCount} files)`,
    "",
    "Install it in any folder (its dependencies come from npm; dissent itself from this file):",
    `  npm install ${tarball}`,
    "  ./node_modules/.bin/dissent --version",
    "Or on your PATH:",
    `  npm install -g ${tarball}`,
    "",
  ].join("\n"),
);
