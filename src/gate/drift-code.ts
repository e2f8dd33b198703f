/**
 * Code in a text, as revision drift reads it (docs/adr/ADR-036): fenced blocks and inline code
 * spans are not prose. Their strings are data (`"utf-8"` holds no figure), their keywords and
 * builtins are not names (`None`, `True`, `return`), the names they bind are their own (`charset =`,
 * `as resp`, a parameter); what they call, import or reach through a dot is an API — a fact a
 * revision can add (`urllib.request.urlopen`, `headers.get_content_charset`).
 */

/** Fenced blocks (``` or ~~~, to their closing fence or the end) and inline code spans. */
const CODE_RE = /(^|\n)[ \t]*(```|~~~)[^\n]*\n[\s\S]*?(?:\n[ \t]*\2[^\n]*(?=\n|$)|$)|(`+)(?!`)([^`\n]|[^`\n][\s\S]*?[^`\n])\3(?!`)/g;

/** Where the code of a text is: [start, end) of each region, in order. */
export function codeRegions(text: string): [number, number][] {
  if (!text.includes("`") && !text.includes("~~~")) return [];
  const out: [number, number][] = [];
  CODE_RE.lastIndex = 0;
  for (let m = CODE_RE.exec(text); m !== null; m = CODE_RE.exec(text)) {
    const start = m.index + (m[1]?.length ?? 0);
    out.push([start, m.index + m[0].length]);
    if (m[0] === "") CODE_RE.lastIndex++;
  }
  return out;
}

/** The text with every region blanked (offsets kept). */
export function blank(text: string, regions: readonly [number, number][]): string {
  if (regions.length === 0) return text;
  let out = "";
  let at = 0;
  for (const [s, e] of regions) {
    out += text.slice(at, s) + text.slice(s, e).replace(/[^\n]/g, " ");
    at = e;
  }
  return out + text.slice(at);
}

/** Keywords, literals and builtins of the languages answers show most (Python, JavaScript/TypeScript, shell, SQL): never names. */
export const CODE_WORDS = new Set(
  (
    "False None True and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield match case " +
    "print len str int float bool list dict set tuple range open type isinstance super object bytes enumerate zip map filter sorted min max sum any all abs round input self cls " +
    "var let const function new this typeof instanceof void delete throw catch switch default do extends export implements interface package private protected public static enum " +
    "null undefined true false NaN Infinity console require module exports Promise Array Object String Number Boolean Error Map Set JSON Math Date " +
    "string number boolean any unknown never readonly keyof declare namespace of " +
    "echo cd ls cat rm cp mv mkdir sudo export then fi esac done " +
    "SELECT FROM WHERE INSERT INTO UPDATE DELETE VALUES CREATE TABLE ALTER DROP JOIN ON AND OR NOT NULL ORDER BY GROUP LIMIT"
  ).split(" "),
);

/** What prose capitalises but is a keyword, not a name: `None`, `True`, `False`, `Null`, `NaN`. */
export const PROSE_KEYWORDS = new Set(["None", "True", "False", "Null", "NULL", "NaN", "Infinity", "Undefined"]);

const STRING_RE = /"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|`(?:[^`\\]|\\.)*`/g;
const COMMENT_RE = /(?:^|\s)(?:#|\/\/)[^\n]*/g;
const IDENT = /[A-Za-z_$][\w$]*/y;
/** The distinct API names read from one text's code (their de-duplication is quadratic in them). */
const MAX_APIS = 1000;

/** Names a piece of code binds itself: assigned, imported as, defined, its parameters and loop variables. */
function boundNames(code: string): Set<string> {
  const bound = new Set<string>();
  const add = (re: RegExp, group = 1) => {
    for (const m of code.matchAll(re)) if (m[group]) bound.add(m[group]);
  };
  add(/(?:^|[^\w$.])([A-Za-z_$][\w$]*)\s*(?::[^=\n]{1,40})?=(?!=)/g); // x = …, x: T = …
  add(/\bas\s+([A-Za-z_$][\w$]*)/g);
  add(/\b(?:def|class|function|const|let|var|interface|type)\s+([A-Za-z_$][\w$]*)/g);
  add(/\bfor\s*\(?\s*(?:const|let|var)?\s*([A-Za-z_$][\w$]*)\s+(?:in|of)\b/g);
  for (const m of code.matchAll(/\b(?:def|function)\s*[\w$]*\s*\(([^)]*)\)/g))
    for (const p of (m[1] ?? "").split(",")) {
      const name = /^\s*\**\s*([A-Za-z_$][\w$]*)/.exec(p)?.[1];
      if (name) bound.add(name);
    }
  for (const m of code.matchAll(/\(([^()]*)\)\s*=>/g))
    for (const p of (m[1] ?? "").split(",")) {
      const name = /^\s*([A-Za-z_$][\w$]*)/.exec(p)?.[1];
      if (name) bound.add(name);
    }
  return bound;
}

/** An API name of the code: the chain as written, and the names in it that must be found in what was given. */
export interface ApiName {
  text: string;
  names: string[];
}

/**
 * The API names of a text's code: each chain of names joined by dots (`urllib.request.urlopen`,
 * `resp.headers.get_content_charset`) that is called, reached through a dot, imported or is a
 * class-like capitalised name (`HTTPError`) — with keywords and the names the code binds itself
 * (a variable at the root of a chain) left out of what is checked.
 */
export function apiNames(text: string, regions: readonly [number, number][]): ApiName[] {
  if (regions.length === 0) return [];
  const code = regions
    .map(([s, e]) =>
      text
        .slice(s, e)
        .replace(/^[ \t]*(```|~~~)[^\n]*|\n[ \t]*(```|~~~)[^\n]*$/g, "")
        .replace(/^`+|`+$/g, ""),
    )
    .join("\n");
  const bound = boundNames(code);
  const imports = new Set([...code.matchAll(/(?:^|\n)[ \t]*(?:import|from)\s+([A-Za-z_$][\w$]*)/g)].map((m) => m[1] as string));
  const plain = code.replace(STRING_RE, (s) => " ".repeat(s.length)).replace(COMMENT_RE, (s) => " ".repeat(s.length));
  const out = new Map<string, ApiName>();
  for (let i = 0; i < plain.length; ) {
    const c = plain[i] as string;
    const startsChain = /[A-Za-z_$]/.test(c) || (c === "." && /[A-Za-z_$]/.test(plain[i + 1] ?? "") && plain[i - 1] === ")");
    if (!startsChain || (i > 0 && /[\w$]/.test(plain[i - 1] as string))) {
      i++;
      continue;
    }
    // A chain: name(.name)*, or `.name…` right after a call (`read().decode`).
    const afterCall = c === ".";
    const parts: string[] = [];
    let j = afterCall ? i + 1 : i;
    for (;;) {
      IDENT.lastIndex = j;
      const m = IDENT.exec(plain);
      if (!m) break;
      parts.push(m[0]);
      j = IDENT.lastIndex;
      if (plain[j] !== "." || !/[A-Za-z_$]/.test(plain[j + 1] ?? "")) break;
      j++;
    }
    const from = i;
    i = Math.max(j, i + 1);
    if (parts.length === 0) continue;
    const called = /^\s*\(/.test(plain.slice(j, j + 4));
    const before = plain.slice(Math.max(0, from - 60), from);
    const imported = /(?:^|\n)[ \t]*(?:import|from)\s+$/.test(before) || /\bimport\s+(?:[\w$]+\s*,\s*)*$/.test(before);
    const classLike = /^[A-Z][a-z]+[A-Z]\w*$|^[A-Z]\w*Error$/.test(parts.at(-1) ?? "");
    // A dotted name that is neither called nor imported is an API when its root is the code's own
    // module or variable, or it is long or class-like (`urllib.error.HTTPError`); else it is a file
    // name or an argument (`prod.tfplan`, `package.json`).
    const dottedApi = parts.length > 2 || classLike || ((bound.has(parts[0] as string) || imports.has(parts[0] as string)) && parts.length > 1);
    if (!(afterCall || called || imported || classLike || dottedApi)) continue;
    // A name the code binds is its own at the root of a chain (`resp.read`: resp); keywords are never APIs.
    const names = parts.filter((p, k) => !CODE_WORDS.has(p) && !(k === 0 && !afterCall && !imported && bound.has(p)));
    if (names.length === 0) continue;
    const chain = parts.join(".");
    if (!out.has(chain)) out.set(chain, { text: chain, names });
    if (out.size >= MAX_APIS) break;
  }
  // A chain another one says in full is left to it: `urllib.request` and `urlopen` to `urllib.request.urlopen`.
  const all = [...out.values()];
  return all.filter(
    (a) => !all.some((b) => b !== a && (b.text.startsWith(`${a.text}.`) || (b.names.length > a.names.length && a.names.every((n) => b.names.includes(n))))),
  );
}
