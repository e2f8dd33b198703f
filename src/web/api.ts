/** The page's one door to the server: every request carries the token the loader asked for. */

const KEY = "dissent-token";

/** The Authorization header, when this tab has a token. */
export function authHeaders(): Record<string, string> {
  const token = sessionStorage.getItem(KEY);
  return token ? { authorization: `Bearer ${token}` } : {};
}

/** The server refused the token (it changed, or the tab's copy is wrong): forget it and ask again. */
export function tokenRefused(): void {
  sessionStorage.removeItem(KEY);
  location.reload();
}

async function errorOf(res: Response): Promise<string> {
  const text = await res.text();
  try {
    const body = JSON.parse(text) as { error?: unknown };
    return typeof body.error === "string" ? body.error : `HTTP ${res.status}`;
  } catch {
    return `HTTP ${res.status}: ${text.slice(0, 200)}`; // not JSON: show what the server said
  }
}

/** The first view's request, sent by the loader while the app was loading (taken once). */
function prefetched(path: string): Promise<Response> | undefined {
  const w = window as unknown as { __dissentPrefetch?: { path: string; response: Promise<Response> } };
  const p = w.__dissentPrefetch;
  if (p?.path !== path) return undefined;
  w.__dissentPrefetch = undefined;
  return p.response;
}

/** GET a JSON route of the API. */
export async function getJson<T>(path: string, signal?: AbortSignal): Promise<T> {
  const res = await (prefetched(path) ?? fetch(path, { headers: authHeaders(), cache: "no-store", ...(signal ? { signal } : {}) }));
  if (res.status === 401) {
    tokenRefused();
    throw new Error("the token was refused");
  }
  if (!res.ok) throw new Error(await errorOf(res));
  return (await res.json()) as T;
}
