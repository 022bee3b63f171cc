/* Filters for the index tables (all entries, class pages, the verification matrix). What each row matches is
 * decided in Python (web/filterdata.py) and shipped beside the mount as JSON, so no version range, GPU family
 * or ledger rule is repeated here: this file only intersects sets. The choice lives in the address's query
 * (?gpu=gfx942&rocm=7.2&find=hipcc), restored on load and on Back; rows are only hidden, never removed. */
(function () {
  "use strict";
  const ANY = "*";
  const TEXT = "find";          // not "q": Material's search.share reads ?q= and opens the search dialog

  function after(node, selector) {
    for (let n = node.nextElementSibling; n; n = n.nextElementSibling) {
      if (n.matches(selector)) return n;
      const inner = n.querySelector(selector);
      if (inner) return inner;
    }
    return null;
  }

  function rowId(row) {
    const cell = row.cells[0];
    const a = cell && cell.querySelector("a");
    return ((a || cell || {}).textContent || "").trim().split(/\s+/)[0];
  }

  function select(f) {
    const sel = document.createElement("select");
    sel.setAttribute("aria-label", f.label);
    sel.dataset.key = f.key;
    const all = document.createElement("option");
    all.value = "";
    all.textContent = `${f.label}: all`;
    sel.appendChild(all);
    f.values.forEach((v, i) => {
      const o = document.createElement("option");
      o.value = v;
      o.textContent = f.words ? f.words[i] : v;
      sel.appendChild(o);
    });
    return sel;
  }

  // A row of the matrix matches its platform, tier and outcome filters through one run ([p, t, o] indices);
  // the outcome "none" asks for no such run.
  function runsMatch(runs, joint) {
    if (!joint.length) return true;
    const none = joint.find((c) => c.f.values[c.i] === "none");
    const need = joint.filter((c) => c !== none);
    const hit = (runs || []).some((run) => need.every((c) => run[c.f.part] === c.i));
    return none ? !hit : hit;
  }

  function mount(box) {
    if (box.dataset.ready) return;
    const blob = after(box, "script.eb-filter-data");
    const table = after(box, "table");
    if (!blob || !table || !table.tBodies.length) return;
    const data = JSON.parse(blob.textContent);
    box.dataset.ready = "1";
    const rows = Array.from(table.tBodies[0].rows).map((r) => ({r, d: data.rows[rowId(r)] || {}}));
    const q = document.createElement("input");
    q.type = "search";
    q.placeholder = "Filter entries… / 筛选";
    q.setAttribute("aria-label", "Filter the table");
    box.appendChild(q);
    const selects = data.filters.map((f) => ({f, sel: box.appendChild(select(f))}));
    const count = document.createElement("span");
    count.className = "eb-filter-count";
    count.setAttribute("aria-live", "polite");
    box.appendChild(count);
    const kept = document.createElement("span");
    kept.className = "eb-filter-any";
    box.appendChild(kept);

    const fromUrl = () => {
      const p = new URLSearchParams(location.search);
      q.value = p.get(TEXT) || "";
      selects.forEach(({f, sel}) => {
        const v = p.get(f.key);
        sel.value = v !== null && f.values.includes(v) ? v : "";
      });
    };
    const toUrl = (push) => {
      const p = new URLSearchParams(location.search);
      [[TEXT, q.value.trim()]].concat(selects.map(({f, sel}) => [f.key, sel.value])).forEach(([k, v]) => {
        if (v) p.set(k, v); else p.delete(k);
      });
      const s = p.toString();
      const url = location.pathname + (s ? `?${s}` : "") + location.hash;
      if (url !== location.pathname + location.search + location.hash) {
        history[push ? "pushState" : "replaceState"](null, "", url);
      }
    };
    const apply = () => {
      const needle = q.value.trim().toLowerCase();
      const chosen = selects.filter(({sel}) => sel.value)
        .map(({f, sel}) => ({f, i: f.values.indexOf(sel.value)}));
      const plain = chosen.filter((c) => c.f.part === undefined);
      const joint = chosen.filter((c) => c.f.part !== undefined);
      const anyKept = {};
      let shown = 0;
      rows.forEach(({r, d}) => {
        const ok = (!needle || r.textContent.toLowerCase().includes(needle)) &&
          plain.every((c) => d[c.f.key] === ANY || (d[c.f.key] || []).includes(c.i)) && runsMatch(d.runs, joint);
        r.hidden = !ok;
        if (!ok) return;
        shown++;
        plain.filter((c) => c.f.any && d[c.f.key] === ANY).forEach((c) => {
          anyKept[c.f.key] = (anyKept[c.f.key] || 0) + 1;
        });
      });
      count.textContent = `${shown} of ${rows.length}`;
      kept.textContent = plain.filter((c) => anyKept[c.f.key])
        .map((c) => `includes ${anyKept[c.f.key]} entries for ${c.f.any}`).join("; ");
    };
    let typing = null;
    q.addEventListener("input", () => {
      apply();
      clearTimeout(typing);
      typing = setTimeout(() => toUrl(false), 300);
    });
    selects.forEach(({sel}) => sel.addEventListener("change", () => { apply(); toUrl(true); }));
    window.addEventListener("popstate", () => { fromUrl(); apply(); });
    // Back from another page may restore this one from the cache with its old query: read the address again.
    window.addEventListener("pageshow", (ev) => { if (ev.persisted) { fromUrl(); apply(); } });
    fromUrl();
    apply();
  }

  function init() { document.querySelectorAll(".eb-filter").forEach(mount); }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init); else init();
})();
