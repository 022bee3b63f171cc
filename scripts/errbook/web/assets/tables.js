/* Filters for the entry tables (all entries, class pages): one select per column named in the mount's
 * data-columns (values are the cell's items, separated by " · ") and a text box over every column.
 * Rows are only hidden, never removed; the table keeps its natural width (it wraps, nothing is clipped). */
(function () {
  "use strict";
  const SEP = /\s*·\s*/;

  function tableAfter(node) {
    for (let n = node.nextElementSibling; n; n = n.nextElementSibling) {
      if (n.tagName === "TABLE") return n;
      const t = n.querySelector && n.querySelector("table");
      if (t) return t;
    }
    return null;
  }

  function mount(box) {
    if (box.dataset.ready) return;
    const table = tableAfter(box);
    if (!table || !table.tHead || !table.tBodies.length) return;
    box.dataset.ready = "1";
    const heads = Array.from(table.tHead.rows[0].cells).map((c) => c.textContent.trim());
    const rows = Array.from(table.tBodies[0].rows);
    const items = (row, i) => row.cells[i].textContent.split(SEP).map((s) => s.trim()).filter(Boolean);
    const count = document.createElement("span");
    count.className = "eb-filter-count";
    const q = document.createElement("input");
    q.type = "search";
    q.placeholder = "Filter entries… / 筛选";
    q.setAttribute("aria-label", "Filter the table");
    box.appendChild(q);
    const selects = [];
    (box.dataset.columns || "").split(",").map((s) => s.trim()).forEach((col) => {
      const i = heads.indexOf(col);
      if (i < 0) return;
      const values = new Set();
      rows.forEach((r) => items(r, i).forEach((v) => values.add(v)));
      const sel = document.createElement("select");
      sel.setAttribute("aria-label", col);
      sel.dataset.column = col;
      const all = document.createElement("option");
      all.value = "";
      all.textContent = `${col}: all`;
      sel.appendChild(all);
      Array.from(values).sort().forEach((v) => {
        const o = document.createElement("option");
        o.value = v;
        o.textContent = v;
        sel.appendChild(o);
      });
      box.appendChild(sel);
      selects.push([sel, i]);
    });
    box.appendChild(count);
    const apply = () => {
      const needle = q.value.trim().toLowerCase();
      let shown = 0;
      rows.forEach((r) => {
        const ok = (!needle || r.textContent.toLowerCase().includes(needle)) &&
          selects.every(([s, i]) => !s.value || items(r, i).includes(s.value));
        r.hidden = !ok;
        if (ok) shown++;
      });
      count.textContent = `${shown} of ${rows.length}`;
    };
    q.addEventListener("input", apply);
    selects.forEach(([s]) => s.addEventListener("change", apply));
    apply();
  }

  function init() { document.querySelectorAll(".eb-filter").forEach(mount); }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init); else init();
})();
