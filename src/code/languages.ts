import type { ParsedLanguage } from "./queries.js";

/** Parsed languages by file extension (lower case, with the dot). */
const PARSED: Record<string, ParsedLanguage> = {
  ".ts": "typescript",
  ".mts": "typescript",
  ".cts": "typescript",
  ".tsx": "tsx",
  ".js": "javascript",
  ".mjs": "javascript",
  ".cjs": "javascript",
  ".jsx": "javascript",
  ".py": "python",
  ".pyi": "python",
  ".go": "go",
  ".rs": "rust",
  ".java": "java",
};

/** Text files by extension: mapped as plain-text chunks under this language name. */
const TEXT: Record<string, string> = {
  ".md": "markdown",
  ".mdx": "markdown",
  ".markdown": "markdown",
  ".rst": "rst",
  ".txt": "text",
  ".yaml": "yaml",
  ".yml": "yaml",
  ".json": "json",
  ".jsonc": "json",
  ".toml": "toml",
  ".ini": "ini",
  ".cfg": "ini",
  ".xml": "xml",
  ".html": "html",
  ".css": "css",
  ".scss": "css",
  ".sh": "shell",
  ".bash": "shell",
  ".zsh": "shell",
  ".sql": "sql",
  ".c": "c",
  ".h": "c",
  ".cc": "cpp",
  ".cpp": "cpp",
  ".hpp": "cpp",
  ".cs": "csharp",
  ".rb": "ruby",
  ".php": "php",
  ".kt": "kotlin",
  ".swift": "swift",
  ".scala": "scala",
  ".lua": "lua",
  ".vue": "vue",
  ".svelte": "svelte",
  ".proto": "protobuf",
  ".graphql": "graphql",
  ".tf": "terraform",
};

/** Files known by name. */
const NAMED: Record<string, string> = {
  dockerfile: "dockerfile",
  makefile: "make",
  readme: "text",
  license: "text",
  changelog: "text",
};

/** Extensions that are binary whatever their bytes say: never read. */
export const BINARY_EXTENSIONS = new Set(
  (
    ".png .jpg .jpeg .gif .bmp .ico .icns .webp .avif .tif .tiff .psd .pdf .zip .gz .tgz .bz2 .xz .zst .7z .rar .tar " +
    ".jar .war .class .so .dylib .dll .exe .o .a .lib .obj .wasm .pyc .pyo .whl .egg .woff .woff2 .ttf .otf .eot " +
    ".mp3 .mp4 .m4a .wav .ogg .flac .mov .avi .mkv .webm .sqlite .db .bin .dat .pack .idx .lockb .node"
  ).split(" "),
);

const extOf = (path: string) => {
  const base = path.slice(path.lastIndexOf("/") + 1).toLowerCase();
  const dot = base.lastIndexOf(".");
  return { base, ext: dot > 0 ? base.slice(dot) : "" };
};

/** The language a path is mapped as: a parsed one, a text one, or "text" for anything else that reads as text. */
export function languageOf(path: string): { language: string; parsed: ParsedLanguage | null } {
  const { base, ext } = extOf(path);
  const parsed = PARSED[ext];
  if (parsed) return { language: parsed === "tsx" ? "typescript" : parsed, parsed };
  const text = TEXT[ext] ?? NAMED[base.replace(/\.[^.]*$/, "")] ?? "text";
  return { language: text, parsed: null };
}

/** True for an extension that is never text. */
export function binaryByName(path: string): boolean {
  return BINARY_EXTENSIONS.has(extOf(path).ext);
}

/** The extensions the parsed languages resolve imports to, in the order tried. */
export const SOURCE_EXTENSIONS = Object.keys(PARSED);
