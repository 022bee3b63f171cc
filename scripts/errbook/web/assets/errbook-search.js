/* Material's search worker with one lunr bug fixed and one ranking signal added, started in its place by
 * assets/errbook/search-query.js.
 *
 * lunr merges equal nodes of its token set using TokenSet.toString() as the key, and that key writes each edge
 * as label + node id with nothing between them: a node with the edge '1'→234 and one with '1'→2, '3'→4 both
 * give "01234". Indexes full of version numbers and error codes hit this; the merged set then holds words that
 * are not in the index, a prefix query reaches one ("gpu" did here) and lunr throws (reading '_index'): the
 * search box shows no result at all. The key below ends every edge with ';', so it is unambiguous.
 *
 * Proximity: lunr scores each word on its own, so for a pasted line ("No HIP GPUs are available") a page with
 * "available" in its title outranked the page that holds the whole line eleven times. A result whose field holds
 * k of the query's n words within one short window (twice the query's length, at least 40 characters) has its
 * score multiplied by 1 + PROXIMITY * (k/n)^2, for k >= 2: the classic proximity signal of phrase search with
 * slop, read from the word positions lunr already returns. One-word queries are unchanged.
 *
 * Phrase: a result holding all of them as close as the query writes them (its words in a window of as many
 * positions as the query has words, stop words counted) scores PHRASE times more. Without it a page that says
 * "HIP out of memory" lost to pages holding "hip", "out" and many memory_* words within the wide window.
 *
 * Entry results say which entry and class they are (issue 27 item 13): the site writes each entry's class as
 * self.ERRBOOK_SEARCH_ENTRIES ({"RMN-0090": "Runtime", ...}) at the end of this file, and each result's page
 * title gets "RMN-0090 · Runtime" in front of it. Only what is shown changes, not what is indexed or ranked.
 * The worker is loaded from this site only; nothing else changes. */
"use strict";
(function () {
  const w = new URL(self.location.href).searchParams.get("w") || "";
  if (!/^(\/[\w.~-]+)*\/assets\/javascripts\/workers\/search\.[\w.-]+\.js$/.test(w)) {
    throw new Error("errbook-search.js: not Material's search worker: " + w);
  }
  importScripts(w);
  labelEntries();
  // Material's worker answers with postMessage({type: 3, data: {items: [[page, ...sections], ...]}}); the page
  // renders each title as HTML (it carries <mark> highlights).
  function labelEntries() {
    if (typeof self.postMessage !== "function") return;
    const post = self.postMessage;
    const esc = (s) => String(s).replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
    self.postMessage = function (msg, ...rest) {
      const classes = self.ERRBOOK_SEARCH_ENTRIES || {};
      const items = msg && msg.type === 3 && msg.data && msg.data.items;
      for (const group of Array.isArray(items) ? items : []) {
        for (const doc of group) {
          const m = /(?:^|\/)entries\/(RMN-\d+)\/$/.exec(String(doc.location));
          if (m && classes[m[1]]) {
            doc.title = `<span class="eb-search-entry">${esc(m[1])} · ${esc(classes[m[1]])}</span> ${doc.title}`;
          }
        }
      }
      return post.call(self, msg, ...rest);
    };
  }

  const TokenSet = self.lunr && self.lunr.TokenSet;
  if (!TokenSet) return;
  TokenSet.prototype.toString = function () {
    if (this._str) return this._str;
    let key = this.final ? "1" : "0";
    const labels = Object.keys(this.edges).sort();
    for (let i = 0; i < labels.length; i++) key += labels[i] + this.edges[labels[i]].id + ";";
    return key;
  };

  const PROXIMITY = 2, PHRASE = 2, BLOCK = 1 << 20;
  const Index = self.lunr.Index, Query = self.lunr.Query, QueryParser = self.lunr.QueryParser;
  if (!Index || !Query || !QueryParser) return;

  // The query's words as lunr searches them (its parser and search pipeline), each with whether it is a prefix
  // (lunr's parser leaves a typed "memory*" as that term, flagged by no wildcard), less the stop words the index
  // never holds (a prefix keeps its stop word: lunr runs no pipeline on it); out.written: how many words the query
  // writes, stop words counted.
  const isStop = (t) => typeof self.lunr.stopWordFilter === "function" &&
    self.lunr.stopWordFilter(new self.lunr.Token(t)) === undefined;
  function queryWords(index, text) {
    const q = new Query(index.fields);
    const out = [];
    out.written = 0;
    try { new QueryParser(text, q).parse(); } catch (e) { return out; }
    for (const c of q.clauses) {
      if (c.presence === Query.presence.PROHIBITED) continue;
      out.written++;
      const prefix = Boolean(c.wildcard & Query.wildcard.TRAILING) || /\*$/.test(c.term);
      const bare = c.term.replace(/\*+$/, "");
      if (!prefix && isStop(bare)) continue;
      const terms = c.usePipeline ? index.pipeline.runString(bare, { fields: c.fields }) : [bare];
      for (const t of terms) if (t && !out.some((w) => w.term === t)) out.push({ term: t, prefix });
    }
    return out;
  }

  // The most query words one window of `span` characters holds, in one block of one field of a result.
  function nearest(words, metadata, span) {
    const byField = {};
    for (const [term, fields] of Object.entries(metadata)) {
      const k = words.findIndex((w) => w.term === term || (w.prefix && term.startsWith(w.term)));
      if (k < 0) continue;
      for (const [field, data] of Object.entries(fields)) {
        for (const p of (data && data.position) || []) {
          // Material's tokenizer packs a position as block << 20 | offset in that block (lunr's own: [start, length])
          const [block, start] = Array.isArray(p) ? [0, p[0]] : [Math.floor(p / BLOCK), p % BLOCK];
          const key = field + ":" + block;
          (byField[key] = byField[key] || []).push([start, k]);
        }
      }
    }
    let best = 0;
    for (const hits of Object.values(byField)) {
      hits.sort((a, b) => a[0] - b[0]);
      for (let i = 0; i < hits.length; i++) {
        const seen = new Set();
        for (let j = i; j < hits.length && hits[j][0] - hits[i][0] <= span; j++) seen.add(hits[j][1]);
        best = Math.max(best, seen.size);
      }
    }
    return best;
  }

  const search = Index.prototype.search;
  Index.prototype.search = function (text) {
    const results = search.call(this, text);
    const words = queryWords(this, text);
    if (words.length < 2) return results;
    const span = Math.max(40, 2 * String(text).replace(/~\d+/g, "").length);
    for (const r of results) {
      const metadata = (r.matchData && r.matchData.metadata) || {};
      const k = nearest(words, metadata, span);
      if (k >= 2) r.score *= 1 + PROXIMITY * (k / words.length) ** 2;
      if (k === words.length && nearest(words, metadata, words.written - 1) === k) r.score *= PHRASE;
    }
    return results.sort((a, b) => b.score - a.score);
  };
})();
