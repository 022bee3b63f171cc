/* Makes Material's site search (lunr, in a Web Worker) take pasted error text as words, not query syntax.
 *  - lunr reads "word:" as a field name, "-word" as "must not contain", "~" and "^" as operators, so a pasted
 *    line such as "Unable to open /dev/kfd read-write: Cannot allocate memory" failed with no results; such
 *    characters (a '-' or '+' only when it does not join two words) and quotes and brackets become spaces.
 *  - Material searches every word as a prefix (hip -> hip*), so "hip" also matched each hipXxx identifier of a
 *    page and identifier-heavy pages outranked the entry that holds the exact message. Complete words are now
 *    matched exactly (word~0); only a last word that may still be being typed stays a prefix (in a query of
 *    2 to 4 words only when it has 3 characters or more: "...IMPL=0" must not match every word starting with 0;
 *    never in a longer query, a pasted line whose last word is complete).
 *  - An English contraction keeps its verb ("doesn't" -> "does", "can't" -> "can"): split at the apostrophe it
 *    gave "doesn" and "t", words that only other contractions share, so "pytorch doesn't see my gpu" found pages
 *    full of "don't" and "isn't" instead of the one that says PyTorch "does not see" the GPU.
 *  - Material segments a Chinese query against the index vocabulary but never tries a word that ends at the
 *    last character (显存不足 became 显存 + 不, and 不 matches every word starting with 不); repeating the last
 *    character of each Chinese run lets the final word be found.
 *  - Material's search worker is started through errbook-search.js, which fixes a lunr bug that made whole
 *    queries fail (see that file).
 * Loaded in <head> before Material's bundle; it only rewrites the query messages the page sends to Material's
 * search worker (type 2 = query) and where that worker starts from. Nothing is sent anywhere. */
(function (root) {
  "use strict";
  const HAN = /\p{sc=Han}/u;

  function fixQuery(q) {
    const s = String(q);
    const typing = /[\p{L}\p{N}_]$/u.test(s);               // the last word may be incomplete
    const words = s
      .replace(/\b(can|won)['’]t\b/gi, (m, w) => (w.toLowerCase() === "can" ? "can" : "will"))
      .replace(/\b([A-Za-z]+)n['’]t\b/g, "$1")              // "doesn't see" -> "does see": "not" is a stop word
      .replace(/[:^~*"'‘’“”`()[\]{}<>,;|=!]/g, " ")
      .replace(/[-+]+(?![\p{L}\p{N}_])|(?<![\p{L}\p{N}_])[-+]+/gu, " ")
      .replace(/\p{sc=Han}{2,}/gu, (run) => run + run.slice(-1))
      .split(/\s+/).filter(Boolean);
    // The last word stays a prefix while it may be being typed; in a query of several words only when it is at
    // least 3 characters long: a pasted line ending in "=0" or "at" would otherwise match every word that starts
    // with 0 or at, and those pages outrank the one that holds the message. A query of more than 4 words is a
    // pasted line or a finished sentence: its last word is complete ("... variable is set" must not match every
    // set_xxx identifier of a page).
    const prefix = (w, i) => typing && i === words.length - 1 && (words.length === 1 || (w.length >= 3 && words.length <= 4));
    return words.map((w, i) => (!prefix(w, i) && !HAN.test(w) ? `${w}~0` : w)).join(" ");
  }

  root.ErrbookSearchQuery = fixQuery;
  if (typeof Worker === "undefined" || !Worker.prototype || Worker.prototype.__errbook) return;

  // Material's search worker starts as errbook-search.js, which loads it and fixes a lunr bug first.
  const Native = root.Worker;
  root.Worker = class extends Native {
    constructor(url, options) {
      let u = url;
      try {
        const abs = new URL(String(url), root.location.href);
        if (abs.origin === root.location.origin &&
            /\/assets\/javascripts\/workers\/search\.[\w.-]+\.js$/.test(abs.pathname)) {
          u = new URL(`errbook-search.js?w=${encodeURIComponent(abs.pathname)}`, abs).href;
        }
      } catch (e) { /* leave the URL as it is */ }
      super(u, options);
    }
  };
  const post = Worker.prototype.postMessage;
  Worker.prototype.postMessage = function (msg, ...rest) {
    if (msg && msg.type === 2 && typeof msg.data === "string") msg = Object.assign({}, msg, { data: fixQuery(msg.data) });
    return post.call(this, msg, ...rest);
  };
  Worker.prototype.__errbook = true;
})(typeof self !== "undefined" ? self : globalThis);
