// Material's own search worker (argv[2]) started the way the site starts it, through assets/errbook/errbook-search.js
// (argv[3]), fed an index {config, docs} and queries on stdin through its message protocol (setup, then one query
// message each, rewritten first by assets/errbook/search-query.js, argv[4], as the page does); prints the pages'
// locations per query, best first: [[location, ...] per query].
"use strict";
const vm = require("vm"), fs = require("fs"), path = require("path");
const [bundle, patch, rewrite] = process.argv.slice(2);
const ctx = { console, URL, Set, Map, Object, Array, Math, String, Error, RegExp, JSON, Promise, setTimeout,
              Uint16Array, TextEncoder };
ctx.self = ctx;
ctx.location = { href: "http://site/assets/javascripts/workers/errbook-search.js?w=/assets/javascripts/workers/" +
                       path.basename(bundle) };
let onMessage = null;
const replies = [];
ctx.addEventListener = (type, fn) => { if (type === "message") onMessage = fn; };
ctx.postMessage = (m) => replies.push(m);
let loaded = false;
ctx.importScripts = () => { if (!loaded) { loaded = true; vm.runInContext(fs.readFileSync(bundle, "utf8"), ctx); } };
vm.createContext(ctx);
vm.runInContext(fs.readFileSync(patch, "utf8"), ctx);
vm.runInContext(fs.readFileSync(rewrite, "utf8"), ctx);
const req = JSON.parse(fs.readFileSync(0, "utf8"));

(async () => {
  const wait = async () => { for (let i = 0; i < 1000 && !replies.length; i++) await new Promise((r) => setTimeout(r, 1)); };
  onMessage({ data: { type: 0, data: { config: req.config, docs: req.docs, options: {} } } });
  await wait();
  replies.length = 0;
  const out = [];
  for (const q of req.queries) {
    onMessage({ data: { type: 2, data: ctx.ErrbookSearchQuery(q) } });
    await wait();
    const reply = replies.shift();
    const items = (reply && reply.data && reply.data.items) || [];
    out.push(req.scores ? items.map((g) => [g[0].location, g[0].score]) : items.map((g) => g[0].location.split("#")[0]));
  }
  process.stdout.write(JSON.stringify(out));
})();
