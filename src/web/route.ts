import { useEffect, useState } from "preact/hooks";

/** The page's places, from the URL's hash; `notfound` for an address that names none (a malformed escape, say). */
export type Route =
  | { view: "board" }
  | { view: "issue"; id: string }
  | { view: "runs"; id?: string }
  | { view: "costs" }
  | { view: "wiki"; id?: string }
  | { view: "notfound"; hash: string };

/** Decodes a hash segment; undefined for a malformed escape (`%E0%A4%A`), which decodeURIComponent throws on. */
function decoded(part: string): string | undefined {
  try {
    return decodeURIComponent(part);
  } catch {
    return undefined; // URIError: the caller shows "not found"
  }
}

/** The route a hash names; never throws. */
export function parseRoute(hash: string): Route {
  const parts: string[] = [];
  for (const part of hash.replace(/^#\/?/, "").split("/")) {
    const d = decoded(part);
    if (d === undefined) return { view: "notfound", hash };
    parts.push(d);
  }
  const [head, id] = parts;
  if (head === "issue" && id) return { view: "issue", id };
  if (head === "runs") return id ? { view: "runs", id } : { view: "runs" };
  if (head === "costs") return { view: "costs" };
  if (head === "wiki") return id ? { view: "wiki", id } : { view: "wiki" };
  return { view: "board" };
}

export const href = {
  board: () => "#/",
  issue: (id: string) => `#/issue/${encodeURIComponent(id)}`,
  runs: (id?: string) => (id ? `#/runs/${encodeURIComponent(id)}` : "#/runs"),
  costs: () => "#/costs",
  wiki: (id?: string) => (id ? `#/wiki/${encodeURIComponent(id)}` : "#/wiki"),
};

export function useRoute(): Route {
  const [route, set] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const on = () => set(parseRoute(location.hash));
    addEventListener("hashchange", on);
    return () => removeEventListener("hashchange", on);
  }, []);
  return route;
}
