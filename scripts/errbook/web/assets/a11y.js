/* Two accessibility gaps of Material's pages, closed on every page (issue 27 item 16; tests/test_browser_a11y.py):
 *  - the search dialog (<div class="md-search" role="dialog">) has no accessible name: it takes its input's label;
 *  - a block that scrolls must be reachable by keyboard. Material makes a code block focusable only when it
 *    scrolls sideways, and only where the pointer can hover; here any code block or evidence block that scrolls
 *    either way (the fix box caps code at a few lines, run pages cap outputs), and a table wider than a phone
 *    (Material's scroll wrapper: the matrix's summary has no link to tab to), is focusable, on phones too.
 *    Blocks the paste page adds later are watched as they appear. */
(function () {
  "use strict";
  const doc = document;
  const dialog = doc.querySelector(".md-search[role=dialog]");
  if (dialog && !dialog.hasAttribute("aria-label") && !dialog.hasAttribute("aria-labelledby")) {
    const input = dialog.querySelector(".md-search__input");
    dialog.setAttribute("aria-label", (input && (input.getAttribute("aria-label") || input.placeholder)) || "Search");
  }

  const SCROLLERS = ".md-typeset pre > code, .md-typeset pre.eb-evidence, .md-typeset .md-typeset__scrollwrap";
  const scrolls = (el) => el.scrollHeight > el.clientHeight + 1 || el.scrollWidth > el.clientWidth + 1;
  function mark(el) {
    const want = scrolls(el), has = el.getAttribute("tabindex") === "0";
    if (want && !has) el.setAttribute("tabindex", "0");
    else if (!want && has) el.removeAttribute("tabindex");
  }
  // Sizes change (fonts, the window) and Material sets or removes tabindex by its own rule after layout: either
  // way the block is marked again.
  const resized = typeof ResizeObserver === "undefined" ? null : new ResizeObserver((es) => es.forEach((e) => mark(e.target)));
  const retagged = new MutationObserver((ms) => ms.forEach((m) => mark(m.target)));
  const seen = new WeakSet();
  function watch() {
    doc.querySelectorAll(SCROLLERS).forEach((el) => {
      if (seen.has(el)) return;
      seen.add(el);
      mark(el);
      if (resized) resized.observe(el);
      retagged.observe(el, { attributes: true, attributeFilter: ["tabindex"] });
    });
  }
  watch();
  let queued = false;
  new MutationObserver(() => {
    if (queued) return;
    queued = true;
    requestAnimationFrame(() => { queued = false; watch(); });
  }).observe(doc.body, { childList: true, subtree: true });
})();
