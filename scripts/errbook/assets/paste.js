/* The paste-your-log page: wires the form to the engine (engine.js, window.ErrbookTriage) and renders results.
 * Results are built with textContent: log text is never parsed as HTML, and nothing leaves the page. */
(function (root) {
  "use strict";
  const api = root.ErrbookTriage;
  const compile = api.compile, matchText = api.matchText;
  // ---- page wiring (only in a browser) ----
  function el(tag, text, cls) { const e = document.createElement(tag); if (text != null) e.textContent = text; if (cls) e.className = cls; return e; }

  function render(out, res, bundle, elapsed, nlines) {
    out.replaceChildren();
    const meta = bundle.entries || {};
    out.appendChild(el("p", res.length ? `${res.length} matching entr${res.length === 1 ? "y" : "ies"} · ${nlines} lines · ${elapsed} ms · nothing left this page`
                                       : `No entry matched (${nlines} lines). Try the site search with the error line, or add an entry.`));
    res.slice(0, 5).forEach((r, rank) => {
      const m = meta[r.id] || {};
      const box = el("div", null, "admonition " + (rank === 0 ? "success" : "note"));
      const title = el("p", null, "admonition-title");
      const a = el("a", `${r.id} · ${m.title || ""}`);
      a.href = new URL(m.url || "", document.baseURI).href;
      title.appendChild(a);
      title.appendChild(el("span", `  score ${r.score}`));
      box.appendChild(title);
      if (m.summary) box.appendChild(el("p", m.summary));
      if (m.fix) { const p = el("p"); p.appendChild(el("strong", "First fix step: ")); p.appendChild(document.createTextNode(m.fix)); box.appendChild(p); }
      const pre = el("pre");
      r.evidence.slice(0, 4).forEach((ev) => ev.lines.forEach((l) => pre.appendChild(document.createTextNode(`${String(l.line).padStart(6)}: ${l.text}\n`))));
      box.appendChild(pre);
      const run = el("p"); run.appendChild(el("code", `errbook run ${r.id}`)); box.appendChild(run);
      out.appendChild(box);
    });
  }

  function init() {
    const form = document.getElementById("errbook-triage");
    if (!form || !root.ERRBOOK_BUNDLE) return;
    const eng = compile(root.ERRBOOK_BUNDLE);
    const area = document.getElementById("errbook-log");
    const out = document.getElementById("errbook-results");
    const file = document.getElementById("errbook-file");
    const run = (text) => {
      const t0 = performance.now();
      const res = matchText(eng, text, "");
      render(out, res, root.ERRBOOK_BUNDLE, Math.round(performance.now() - t0), text.split("\n").length);
    };
    document.getElementById("errbook-go").addEventListener("click", (ev) => { ev.preventDefault(); run(area.value); });
    if (file) file.addEventListener("change", () => { const f = file.files[0]; if (f) f.text().then((t) => { area.value = t.slice(0, 200000); run(t); }); });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init); else init();
})(typeof window !== "undefined" ? window : globalThis);
