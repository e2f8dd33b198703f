import * as Yaml from "yaml";

/** yaml.ts as the CLI bundle has it (scripts/postbuild.mjs): `yaml` inlined in the bundle, loaded with it. */
export function yaml(): typeof Yaml {
  return Yaml;
}
