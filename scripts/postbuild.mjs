// After tsc: make the built CLI executable, and vendor the browser code pages embed (no CDN, ever).
import { chmodSync, copyFileSync, mkdirSync } from "node:fs";

chmodSync(new URL("../dist/cli/bin.js", import.meta.url), 0o755);

// Chart.js (a devDependency) is copied into the package at build time: the eval report and the
// dashboard inline or serve it from here.
mkdirSync(new URL("../dist/vendor/", import.meta.url), { recursive: true });
copyFileSync(new URL("../node_modules/chart.js/dist/chart.umd.min.js", import.meta.url), new URL("../dist/vendor/chart.umd.min.js", import.meta.url));
