// Make the built CLI executable (npm links bin files, but a direct `./dist/cli/bin.js` should run too).
import { chmodSync } from "node:fs";
chmodSync(new URL("../dist/cli/bin.js", import.meta.url), 0o755);
