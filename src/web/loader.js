// The page's only inline script: it fetches the app with the token (a script tag cannot send an
// Authorization header), runs it from a blob: URL, and asks for the token when the server says 401.
(() => {
  var KEY = "dissent-token";
  var form = document.getElementById("token");
  function ask(refused) {
    document.getElementById("app").hidden = true;
    form.hidden = false;
    document.getElementById("token-error").hidden = !refused;
    document.getElementById("token-value").focus();
  }
  function load() {
    var token = sessionStorage.getItem(KEY);
    var headers = token ? { authorization: "Bearer " + token } : {};
    // The first view's data is asked for while the app loads (the app takes it over by its path).
    var hash = decodeURIComponent(location.hash.replace(/^#\/?/, ""));
    var first = hash === "" ? "/api/issues" : /^issue\/[^/]+$/.test(hash) ? "/api/issues/" + encodeURIComponent(hash.slice(6)) : null;
    if (first) window.__dissentPrefetch = { path: first, response: fetch(first, { headers: headers, cache: "no-store" }) };
    fetch("/assets/app.js", { headers: headers, cache: "no-cache" })
      .then((res) => {
        if (res.status === 401) {
          if (token) sessionStorage.removeItem(KEY);
          ask(Boolean(token));
          return;
        }
        if (!res.ok) throw new Error("the app did not load (HTTP " + res.status + ")");
        return res.text().then((code) => {
          form.hidden = true;
          document.getElementById("app").hidden = false;
          return import(URL.createObjectURL(new Blob([code], { type: "text/javascript" })));
        });
      })
      .catch((e) => {
        document.getElementById("app").textContent = String(e?.message ? e.message : e);
      });
  }
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    sessionStorage.setItem(KEY, document.getElementById("token-value").value.trim());
    load();
  });
  load();
})();
