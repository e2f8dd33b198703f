import { readFileSync } from "node:fs";
import { sha256 } from "./hash.js";
import { packagePath } from "./package-root.js";

/** A prompt file: its text and the hash recorded in ModelCall events. */
export interface PromptFile {
  name: string;
  text: string;
  hash: string;
}

const loaded = new Map<string, PromptFile>();

/** Loads a versioned prompt file shipped with the package (`prompts/…` or `personas/…`), once per process. */
export function promptFile(name: string): PromptFile {
  const known = loaded.get(name);
  if (known) return known;
  const text = readFileSync(packagePath(name), "utf8").trim();
  const file = { name, text, hash: sha256(text).slice(0, 16) };
  loaded.set(name, file);
  return file;
}
