/* Material's search worker with one lunr bug fixed, started in its place by assets/errbook/search-query.js.
 *
 * lunr merges equal nodes of its token set using TokenSet.toString() as the key, and that key writes each edge
 * as label + node id with nothing between them: a node with the edge '1'→234 and one with '1'→2, '3'→4 both
 * give "01234". Indexes full of version numbers and error codes hit this; the merged set then holds words that
 * are not in the index, a prefix query reaches one ("gpu" did here) and lunr throws (reading '_index'): the
 * search box shows no result at all. The key below ends every edge with ';', so it is unambiguous.
 * The worker is loaded from this site only; nothing else changes. */
"use strict";
(function () {
  const w = new URL(self.location.href).searchParams.get("w") || "";
  if (!/^(\/[\w.~-]+)*\/assets\/javascripts\/workers\/search\.[\w.-]+\.js$/.test(w)) {
    throw new Error("errbook-search.js: not Material's search worker: " + w);
  }
  importScripts(w);
  const TokenSet = self.lunr && self.lunr.TokenSet;
  if (!TokenSet) return;
  TokenSet.prototype.toString = function () {
    if (this._str) return this._str;
    let key = this.final ? "1" : "0";
    const labels = Object.keys(this.edges).sort();
    for (let i = 0; i < labels.length; i++) key += labels[i] + this.edges[labels[i]].id + ";";
    return key;
  };
})();
