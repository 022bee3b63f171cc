/* Makes Material's site search (lunr, in a Web Worker) take pasted error text as words, not query syntax:
 *  - lunr reads "word:" as a field name, "-word" as "must not contain", "~" and "^" as operators, so a pasted
 *    line such as "Unable to open /dev/kfd read-write: Cannot allocate memory" failed with "no results";
 *    those characters (and a '-' or '+' that does not join two words, as in '--offload-arch') become spaces:
 *    the words stay, so the search still finds the line's entry;
 *  - Material segments a Chinese query against the index vocabulary but never tries a word that ends at the
 *    last character of the query (显存不足 became 显存 + 不, and 不 matches every word starting with 不);
 *    repeating the last character of each Chinese run lets the final word be found.
 * Loaded in <head> before Material's bundle; it only rewrites the query messages the page sends to Material's
 * search worker (type 2 = query). Nothing else changes, nothing is sent anywhere. */
(function (root) {
  "use strict";
  function fixQuery(q) {
    return String(q)
      .replace(/[:^~]/g, " ")
      .replace(/[-+]+(?![\p{L}\p{N}_])|(?<![\p{L}\p{N}_])[-+]+/gu, " ")
      .replace(/\p{sc=Han}{2,}/gu, (run) => run + run.slice(-1));
  }
  root.ErrbookSearchQuery = fixQuery;
  if (typeof Worker === "undefined" || !Worker.prototype || Worker.prototype.__errbook) return;
  const post = Worker.prototype.postMessage;
  Worker.prototype.postMessage = function (msg, ...rest) {
    if (msg && msg.type === 2 && typeof msg.data === "string") msg = Object.assign({}, msg, { data: fixQuery(msg.data) });
    return post.call(this, msg, ...rest);
  };
  Worker.prototype.__errbook = true;
})(typeof self !== "undefined" ? self : globalThis);
