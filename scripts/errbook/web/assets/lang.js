/* The reader's language on entry pages, English or 中文: one choice for the whole site, kept where Material keeps
 * the English/中文 content tabs (content.tabs.link stores the labels last chosen, newest first, in localStorage
 * under "__tabs"), so the tabs, the first screen (title, cause, fix box) and the list of steps agree on every page
 * and after a reload. The page marks Chinese blocks eb-zh (lang="zh-Hans") and their English counterparts eb-en;
 * errbook.css shows one of them from <html data-eb-lang>. Without script the page stays English.
 * Other scripts read and set the same choice through window.ErrbookLang (the paste page, paste.js): chosen() is the
 * stored choice ("" when the reader never chose), choose(lang) stores and shows one, and every change is announced
 * as an "eb-lang" event on the document (detail: the language), so a page that draws its own words redraws them. */
(function () {
  "use strict";
  const LABEL = { en: "English", zh: "中文" };
  const root = document.documentElement;

  function stored() {
    let tabs = [];
    try { tabs = (typeof __md_get === "function" && __md_get("__tabs")) || []; } catch (e) { tabs = []; }
    for (const t of Array.isArray(tabs) ? tabs : []) {
      if (t === LABEL.zh) return "zh";
      if (t === LABEL.en) return "en";
    }
    return "";
  }

  function show(lang) {
    const changed = root.dataset.ebLang !== lang;
    root.dataset.ebLang = lang;
    if (changed) document.dispatchEvent(new CustomEvent("eb-lang", { detail: lang }));
    for (const b of document.querySelectorAll(".eb-langswitch button[data-eb-lang]")) {
      b.setAttribute("aria-pressed", String(b.dataset.ebLang === lang));
    }
  }

  function remember(lang) {
    try {
      const tabs = ((typeof __md_get === "function" && __md_get("__tabs")) || []).filter((t) => t !== LABEL[lang]);
      if (typeof __md_set === "function") __md_set("__tabs", [LABEL[lang], ...tabs]);
    } catch (e) { /* storage blocked: the choice lasts for this page only */ }
  }

  // A tab of the page's own English/中文 sets: clicking its label lets Material switch every linked set.
  function tabLabel(lang) {
    for (const l of document.querySelectorAll(".tabbed-set > .tabbed-labels > label")) {
      if (l.textContent.trim() === LABEL[lang]) return l;
    }
    return null;
  }

  function choose(lang) {
    if (!LABEL[lang]) return;
    const label = tabLabel(lang);
    const input = label && document.getElementById(label.htmlFor);
    if (input && !input.checked) label.click();
    remember(lang);
    show(lang);
  }

  window.ErrbookLang = { chosen: stored, choose: choose };
  show(stored() || "en");
  for (const box of document.querySelectorAll(".eb-langswitch")) {
    box.hidden = false;
    box.addEventListener("click", (ev) => {
      const b = ev.target.closest("button[data-eb-lang]");
      if (b) choose(b.dataset.ebLang);
    });
  }
  // The reader picked a tab further down: follow it, keeping that tab where it is on the screen while the
  // first screen above it changes language.
  document.addEventListener("change", (ev) => {
    const input = ev.target;
    if (!(input instanceof HTMLInputElement) || !input.closest(".tabbed-set")) return;
    const l = document.querySelector(`label[for="${CSS.escape(input.id)}"]`);
    const lang = l && Object.keys(LABEL).find((k) => LABEL[k] === l.textContent.trim());
    if (!lang || lang === root.dataset.ebLang) return;
    const set = input.closest(".tabbed-set"), top = set.getBoundingClientRect().top;
    show(lang);
    window.scrollBy(0, set.getBoundingClientRect().top - top);
  });
})();
