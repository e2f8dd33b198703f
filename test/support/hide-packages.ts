import { writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * NODE_OPTIONS under which importing any of `names` fails as it does when the package is not
 * installed (ERR_MODULE_NOT_FOUND, from a loader hook), for a spawned CLI: a default install without
 * the opt-in parts, or one where npm skipped an optional dependency.
 */
export function hidingPackages(dir: string, names: string[]): string {
  const hooks = join(dir, "hide-hooks.mjs");
  writeFileSync(
    hooks,
    `const HIDDEN = ${JSON.stringify(names)};
export async function resolve(specifier, context, next) {
  const name = specifier.startsWith("@") ? specifier.split("/").slice(0, 2).join("/") : specifier.split("/")[0];
  if (HIDDEN.includes(name)) {
    const e = new Error(\`Cannot find package '\${name}' imported from \${context.parentURL}\`);
    e.code = "ERR_MODULE_NOT_FOUND";
    throw e;
  }
  return next(specifier, context);
}
`,
  );
  const register = join(dir, "hide.mjs");
  writeFileSync(register, `import { register } from "node:module";\nregister(${JSON.stringify(new URL(`file://${hooks}`).href)});\n`);
  return `--import=${new URL(`file://${register}`).href}`;
}
