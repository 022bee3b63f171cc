// Loads Material's search worker bundle (argv[2]) and assets/errbook/errbook-search.js (argv[3]) the way the
// browser does (errbook-search.js importScripts the bundle), then runs the cases read from stdin on a small lunr
// index: {docs: [{id, title, text}], queries: [...]} -> [[ref, ...] per query], best first.
"use strict";
const vm = require("vm"), fs = require("fs"), path = require("path");
const [bundle, patch] = process.argv.slice(2);
const ctx = { console, URL, Set, Map, Object, Array, Math, String, Error, RegExp, JSON, Promise, setTimeout };
ctx.self = ctx;
ctx.location = { href: "http://site/assets/javascripts/workers/errbook-search.js?w=/assets/javascripts/workers/" +
                       path.basename(bundle) };
ctx.addEventListener = () => {};
ctx.postMessage = () => {};
ctx.importScripts = () => vm.runInContext(fs.readFileSync(bundle, "utf8"), ctx);
vm.createContext(ctx);
vm.runInContext(fs.readFileSync(patch, "utf8"), ctx);
const req = JSON.parse(fs.readFileSync(0, "utf8"));
const idx = ctx.lunr(function () {
  this.ref("id");
  this.field("title", { boost: 3 });
  this.field("text");
  this.metadataWhitelist = ["position"];
  for (const d of req.docs) this.add(d);
});
process.stdout.write(JSON.stringify(req.queries.map((q) => idx.search(q).map((r) => r.ref))));
