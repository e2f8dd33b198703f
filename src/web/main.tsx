import { render } from "preact";
import { useEffect } from "preact/hooks";
import { useLiveStatus } from "./live.js";
import { href, useRoute } from "./route.js";
import { Board } from "./views/board.js";
import { Costs } from "./views/costs.js";
import { IssuePage } from "./views/issue.js";
import { RunPage, Runs } from "./views/runs.js";
import { Wiki, WikiEntry } from "./views/wiki.js";

/** The dashboard (docs/serve.md): every figure it shows comes from /api/. */
function App() {
  const route = useRoute();
  const live = useLiveStatus();
  useEffect(() => {
    const el = document.getElementById("live");
    if (el) {
      el.textContent = live === "live" ? "live" : live === "connecting" ? "connecting…" : "reconnecting…";
      el.className = `live ${live === "live" ? "ok" : "down"}`;
    }
  }, [live]);
  useEffect(() => {
    const nav = document.getElementById("nav");
    if (!nav) return;
    const links: [string, string, boolean][] = [
      ["board", href.board(), route.view === "board" || route.view === "issue"],
      ["runs", href.runs(), route.view === "runs"],
      ["costs", href.costs(), route.view === "costs"],
      ["wiki", href.wiki(), route.view === "wiki"],
    ];
    nav.replaceChildren(
      ...links.map(([label, to, on]) => {
        const a = document.createElement("a");
        a.href = to;
        a.textContent = label;
        if (on) a.className = "on";
        return a;
      }),
    );
  }, [route.view]);
  switch (route.view) {
    case "board":
      return <Board />;
    case "issue":
      return <IssuePage id={route.id} key={route.id} />;
    case "runs":
      return route.id ? <RunPage id={route.id} key={route.id} /> : <Runs />;
    case "costs":
      return <Costs />;
    case "wiki":
      return route.id ? <WikiEntry id={route.id} key={route.id} /> : <Wiki />;
    case "notfound":
      return (
        <p class="error" data-not-found>
          not found: {route.hash} names no page of the dashboard (<a href={href.board()}>the board</a>)
        </p>
      );
  }
}

const root = document.getElementById("app");
if (root) {
  root.replaceChildren();
  render(<App />, root);
}
