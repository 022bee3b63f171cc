/* The paste-your-log page. Matching runs in a Web Worker (triage-worker.js: the same engine.js and signature
 * bundle as `errbook triage`) under a time budget; when the budget is spent the log is matched in parts and
 * whatever was found is shown with what was not checked, so a slow pattern never freezes the page.
 * Results are incident cards built with textContent (log text is never parsed as HTML). The log never leaves
 * the page: the worker is started when the page loads, so matching itself makes no request at all. */
(function (root) {
  "use strict";
  const doc = root.document;
  const api = root.ErrbookTriage;                                   // engine.js, for browsers without Workers
  const here = doc.currentScript ? doc.currentScript.src : "";
  const WORKER_URL = here ? here.replace(/paste\.js(\?.*)?$/, "triage-worker.js") : "";
  const BIG_PASTE = 256 << 10;       // a longer paste is matched from memory, never put in the text box
  const TAIL = 256 << 10;            // the early look: the log's last TAIL characters (and its error lines)
  const HANG_MS = 15000;             // no word from the worker for this long: it is stuck on a line
  const mb = (n) => (Number(n || 0) / 1e6).toFixed(1);

  const TEXT = {
    en: {
      found: (n, lines, ms) => `${n} matching entr${n === 1 ? "y" : "ies"} · ${lines} lines · ${ms} ms · matched in this page, nothing was sent`,
      likelyFound: (n, lines, ms) => `No signature matched; by similarity to the entries' text ${n === 1 ? "this entry is" : `these ${n} entries are`} likely, not certain · ${lines} lines · ${ms} ms · matched in this page, nothing was sent`,
      messageFound: (n, lines, ms) => `Your log's message has several known causes and no line says which; ${n === 1 ? "this entry is" : `these ${n} entries are`} likely, not certain · ${lines} lines · ${ms} ms · matched in this page, nothing was sent`,
      genericFound: (n, lines, ms) => `Your log's only telling line is a generic one, which seldom names the problem alone; ${n === 1 ? "this entry is" : `these ${n} entries are`} likely, not certain · ${lines} lines · ${ms} ms · matched in this page, nothing was sent`,
      observedOnly: (n, lines, ms) => `No known problem named in your log; ${n} condition${n === 1 ? "" : "s"} worth knowing · ${lines} lines · ${ms} ms · matched in this page, nothing was sent`,
      none: (lines) => `No entry matched (${lines} lines). Next steps:`,
      cause: "Cause: ", fix: (n) => (n > 1 ? `First fix step (1 of ${n}): ` : "Fix: "), openFix: "Open the fix",
      entry: "Entry", run: "Verify on this machine: ", evidence: (n) => `Lines in your log (${n}):`,
      more: (n) => `… ${n} more matching line${n === 1 ? "" : "s"} not shown`, copy: "Copy", copied: "Copied",
      strong: "Strong match: your log contains the message that names this problem.",
      good: "Good match: a line characteristic of this problem.",
      weak: "Weak match: only generic lines that also occur with other problems.",
      likely: "Likely: lines close to this problem's messages, but not its exact message.",
      likelyMessage: "Likely: your log shows a message this problem prints, but other known problems print it too and no line of your log says which.",
      likelyGeneric: "Likely: your log shows a line this problem prints, but a generic one: alone it seldom names the problem, and no other line of your log names this one.",
      likelyWhy: "No line of your log matched this entry's patterns: the guess comes from words your log shares with the entry's text.",
      observation: "Worth knowing: your log shows a condition this entry describes, not an error it causes. It explains your problem only if you also see the entry's symptoms.",
      vDiag: (id, title, words, n) => `${id}: ${title} — ${words}${n > 1 ? ` (1 of ${n} entries)` : ""}`,
      vLikely: (id, title) => `Likely ${id}: ${title} — a guess from similar words, not certain`,
      vMessage: (id, title) => `Likely ${id}: ${title} — its message has several known causes and no line says which`,
      vGeneric: (id, title) => `Likely ${id}: ${title} — from a generic line, which seldom names the problem alone`,
      vObserved: (n) => `No known problem named in your log; ${n} condition${n === 1 ? "" : "s"} worth knowing`,
      vNone: (lines) => `No known entry matched (${lines} lines)`,
      vNoneFirst: (line) => `No known entry matched; first failure line: ${line}`,
      vUnexplained: (n) => `No known entry; ${n} error line${n === 1 ? "" : "s"} unexplained`,
      unexplained: (n, more) => `Error lines no entry explains (${n}${more ? ", the first ones" : ""}):`,
      strongW: "strong match", goodW: "good match", weakW: "weak match",
      copySummary: "Copy summary", summaryCopied: "Summary copied (no log text)",
      restored: "Your last results on this page, kept in this browser tab only. Paste a log to match again.",
      environment: "Environment: ",
      cosmetic: "This message is harmless on its own (cosmetic); look for another cause.",
      nextSearch: "Search the site for an error line (opens the search box here; nothing is sent)",
      nextClass: "Browse the entries by class: ", nextAdd: "Not in the notebook yet? Add it with this log: ",
      nextAddLink: "how to contribute an entry",
      facts: (n) => `Machine facts loaded (${n} facts): results are re-ranked by what that machine shows.`,
      facts_bad: (why) => `That file is not usable as machine facts: ${why}`,
      working: "Matching…", partial: (sec) => `Matching pauses after ${sec} s a pass, so the results are partial: not every line has been checked yet.`,
      coverage: (done, total, n, tail) => `Checked so far: the end of the log (its last ${tail} MB) and its ${n} error line${n === 1 ? "" : "s"} first, then ${done} of ${total} MB in order.`,
      coverageOrder: (done, total) => `Checked so far: ${done} of ${total} MB in order.`,
      cont: (sec) => `Continue matching (${sec} s more)`,
      vSoFar: (done, total) => `Checked ${done} of ${total} MB: no entry matched so far`,
      vEarly: (done, total) => ` (found before the whole log was checked: ${done} of ${total} MB so far)`,
      noneSoFar: (done, total) => `Checked ${done} of ${total} MB, with the end of the log and its error lines first: no entry matched so far.`,
      reading: (done, total) => `Reading the log: ${done} of ${total} MB…`,
      looking: "Looking at the end of the log and its error lines first…",
      ordered: (done, total) => `Checking every line in order: ${done} of ${total} MB…`,
      held: (mb) => ` · ${mb} MB · matched in this page, not put in the box`, pasted: "Pasted log", clear: "Clear",
      skipped: (a, b) => `Lines ${a}–${b} were not checked: matching them took too long.`,
      error: "Matching failed: ", big: (mb) => `Only the first ${mb} MiB of the file were read.`,
      decoded: (e) => `The file is ${e} text; it was decoded as such.`,
      fTitle: "No line names the problem? Find it by what you see",
      fQuestion: (n, max, q, k) => `Question ${n} of at most ${max}: ${q} (${k} entries fit so far)`,
      fList: (n, k) => `${n} of ${k} entries that fit, most similar to your log first:`,
      fNone: "No entry fits these answers. Start over and answer “Don't know” where you are not sure.",
      fInferred: (facet, value, why) => `${facet} = ${value} (${why})`,
      fConfirm: "Confirm: ", fFirst: "First step: ", fExpect: "Expect: ", fRestart: "Start over",
      score: (s) => ` (score ${s})`,
    },
    zh: {
      found: (n, lines, ms) => `匹配到 ${n} 个条目 · ${lines} 行 · ${ms} 毫秒 · 只在本页匹配，未发送任何内容`,
      likelyFound: (n, lines, ms) => `没有签名匹配；按与条目文本的相似度，以下 ${n} 个条目可能相关（不确定）· ${lines} 行 · ${ms} 毫秒 · 只在本页匹配，未发送任何内容`,
      messageFound: (n, lines, ms) => `日志中的消息有多个已知原因，且没有一行说明是哪一个；以下 ${n} 个条目可能相关（不确定）· ${lines} 行 · ${ms} 毫秒 · 只在本页匹配，未发送任何内容`,
      genericFound: (n, lines, ms) => `日志中唯一有指向性的是一行通用信息，它单独出现时很少能指明问题；以下 ${n} 个条目可能相关（不确定）· ${lines} 行 · ${ms} 毫秒 · 只在本页匹配，未发送任何内容`,
      observedOnly: (n, lines, ms) => `日志中没有指明已知问题的报错；有 ${n} 项值得注意的情况 · ${lines} 行 · ${ms} 毫秒 · 只在本页匹配，未发送任何内容`,
      none: (lines) => `没有匹配的条目（${lines} 行）。可以：`,
      cause: "原因：", fix: (n) => (n > 1 ? `第一步修复（共 ${n} 步）：` : "修复："), openFix: "查看修复步骤",
      entry: "条目", run: "在本机验证：", evidence: (n) => `日志中的相关行（${n}）：`,
      more: (n) => `… 另有 ${n} 行未显示`, copy: "复制", copied: "已复制",
      strong: "强匹配：日志中出现了专指此问题的报错信息。",
      good: "较好匹配：出现了此问题的典型日志行。",
      weak: "弱匹配：只有在其他问题中也会出现的通用日志行。",
      likely: "可能相关：日志行与此问题的报错相近，但不是原文。",
      likelyMessage: "可能相关：日志中出现了此问题会打印的消息，但其他已知问题也会打印它，且日志中没有一行说明是哪一个。",
      likelyGeneric: "可能相关：日志中出现了此问题会打印的一行，但它是通用信息：单独出现时很少能指明问题，日志中也没有其他行指向此条目。",
      likelyWhy: "日志中没有与此条目模式匹配的行：这一推测来自日志与条目文本共有的词语。",
      observation: "值得注意：日志显示了此条目描述的一种情况，而不是它导致的报错。只有同时出现该条目的症状时，它才是问题的原因。",
      vDiag: (id, title, words, n) => `${id}：${title} —— ${words}${n > 1 ? `（共 ${n} 个条目中的第 1 个）` : ""}`,
      vLikely: (id, title) => `可能是 ${id}：${title} —— 依据相似词语的推测，不确定`,
      vMessage: (id, title) => `可能是 ${id}：${title} —— 这条消息有多个已知原因，日志中没有一行说明是哪一个`,
      vGeneric: (id, title) => `可能是 ${id}：${title} —— 依据一行通用信息，它单独出现时很少能指明问题`,
      vObserved: (n) => `日志中没有指明已知问题的报错；有 ${n} 项值得注意的情况`,
      vNone: (lines) => `没有匹配的已知条目（${lines} 行）`,
      vNoneFirst: (line) => `没有匹配的已知条目；第一条失败信息：${line}`,
      vUnexplained: (n) => `没有已知条目；${n} 行报错未得到解释`,
      unexplained: (n, more) => `没有条目解释的报错行（${n}${more ? "，仅列出前几行" : ""}）：`,
      strongW: "强匹配", goodW: "较好匹配", weakW: "弱匹配",
      copySummary: "复制摘要", summaryCopied: "摘要已复制（不含日志内容）",
      restored: "这是你在本页的上一次结果，只保存在当前浏览器标签页中。粘贴日志可重新匹配。",
      environment: "环境：",
      cosmetic: "此信息本身无害（仅是提示），请继续查找其他原因。",
      nextSearch: "在站内搜索一行报错（在本页打开搜索框，不发送任何内容）",
      nextClass: "按类别浏览条目：", nextAdd: "错题本里还没有？用这份日志新增条目：", nextAddLink: "如何贡献条目",
      facts: (n) => `已载入机器信息（${n} 项）：结果按该机器的情况重新排序。`,
      facts_bad: (why) => `该文件不能作为机器信息使用：${why}`,
      working: "正在匹配…", partial: (sec) => `每轮匹配 ${sec} 秒后暂停，结果不完整：还有行没有检查。`,
      coverage: (done, total, n, tail) => `目前已检查：先查日志末尾（最后 ${tail} MB）和其中 ${n} 行报错，再按顺序检查了 ${done} / ${total} MB。`,
      coverageOrder: (done, total) => `目前已按顺序检查 ${done} / ${total} MB。`,
      cont: (sec) => `继续匹配（再 ${sec} 秒）`,
      vSoFar: (done, total) => `已检查 ${done} / ${total} MB：目前没有匹配的条目`,
      vEarly: (done, total) => `（在检查完整份日志之前找到：目前已检查 ${done} / ${total} MB）`,
      noneSoFar: (done, total) => `已检查 ${done} / ${total} MB（先查日志末尾和报错行）：目前没有匹配的条目。`,
      reading: (done, total) => `正在读取日志：${done} / ${total} MB…`,
      looking: "先查看日志末尾和报错行…",
      ordered: (done, total) => `按顺序检查每一行：${done} / ${total} MB…`,
      held: (mb) => ` · ${mb} MB · 只在本页匹配，未放入输入框`, pasted: "粘贴的日志", clear: "清除",
      skipped: (a, b) => `第 ${a}–${b} 行未检查：匹配耗时过长。`,
      error: "匹配失败：", big: (mb) => `只读取了文件的前 ${mb} MiB。`,
      decoded: (e) => `该文件是 ${e} 编码的文本，已按此编码读取。`,
      fTitle: "没有一行指明问题？按看到的现象查找",
      fQuestion: (n, max, q, k) => `第 ${n} 个问题（最多 ${max} 个）：${q}（目前有 ${k} 个条目符合）`,
      fList: (n, k) => `符合的 ${k} 个条目中的 ${n} 个，与日志最相近的在前：`,
      fNone: "没有条目符合这些回答。请重新开始，不确定时选“不知道”。",
      fInferred: (facet, value, why) => `${facet} = ${value}（${why}）`,
      fConfirm: "确认：", fFirst: "第一步：", fExpect: "预期输出：", fRestart: "重新开始",
      score: (s) => `（得分 ${s}）`,
    },
  };
  // The reader's language: the site's one stored choice (lang.js, read once the page has loaded, in init), else
  // the browser's language until the reader picks one here or on an entry page.
  let lang = /^zh/i.test((root.navigator && root.navigator.language) || "") ? "zh" : "en";
  let shown = null;                  // the state on screen, drawn again when the reader changes the language
  const t = (k, ...a) => { const v = TEXT[lang][k]; return typeof v === "function" ? v(...a) : v; };

  function el(tag, text, cls) {
    const e = doc.createElement(tag);
    if (text != null) e.textContent = text;
    if (cls) e.className = cls;
    return e;
  }

  /* Entry prose may hold `code spans`: render them as code, everything else as text. */
  function rich(parent, s) {
    String(s || "").split(/(`[^`]+`)/).forEach((part) => {
      if (/^`[^`]+`$/.test(part)) parent.appendChild(el("code", part.slice(1, -1)));
      else if (part) parent.appendChild(doc.createTextNode(part));
    });
    return parent;
  }

  /* A code block with Material's copy button: Material's clipboard handler (delegated on the document)
     copies data-clipboard-text and shows its "Copied" notice. */
  function codeBlock(code) {
    const pre = el("pre", null, "eb-code");
    const nav = el("nav", null, "md-code__nav");
    const btn = el("button", null, "md-code__button");
    btn.type = "button";
    btn.title = t("copy");
    btn.setAttribute("aria-label", t("copy"));
    btn.setAttribute("data-md-type", "copy");
    btn.setAttribute("data-clipboard-text", code);
    nav.appendChild(btn);
    pre.appendChild(nav);
    pre.appendChild(el("code", code));
    return pre;
  }

  /* Every generated link comes from the site's address map (the bundle's `site`: site-root URLs, with the
     root given relative to this script's folder), never from this page's own address. */
  function siteUrl(name, vars) {
    const site = (root.ERRBOOK_BUNDLE || {}).site || {};
    const rel = String(site[name] || "").replace(/\{(\w+)\}/g, (_, k) => encodeURIComponent((vars || {})[k] || ""));
    return new URL(rel, new URL(site.root || "", here || doc.baseURI)).href;
  }

  function link(text, href, cls) {
    const a = el("a", text, cls);
    a.href = href;
    return a;
  }

  /* Plain-words confidence from the answer level and the matched signatures' priority (weight = 100 × priority + …). */
  function confidence(r, weights) {
    // likely: the second stage's guess, or a message several known causes print with no line saying which
    if (r.level === "likely" || r.confidence === "likely") return ["likely", t(r.message_page ? "likelyMessage" : r.generic ? "likelyGeneric" : "likely")];
    if (r.level === "observation") return ["observation", t("observation")];
    const best = Math.max(0, ...(r.signatures || []).map((s) => weights.get(`${r.id}/${s}`) || 0));
    const pr = Math.floor(best / 100);
    if (pr >= 5) return ["strong", t("strong")];
    if (pr >= 3) return ["good", t("good")];
    return ["weak", t("weak")];
  }

  function evidence(r) {
    const seen = new Set(), lines = [];
    (r.evidence || []).forEach((ev) => ev.lines.forEach((l) => {
      const k = `${l.source || ""}\u0000${l.line}`;
      if (!seen.has(k)) { seen.add(k); lines.push(l); }
    }));
    lines.sort((a, b) => ((a.source || "") < (b.source || "") ? -1 : (a.source || "") > (b.source || "") ? 1 : a.line - b.line));
    return lines;
  }

  function card(r, rank, bundle, weights) {
    const m = (bundle.entries || {})[r.id] || {};
    const [level, words] = confidence(r, weights);
    // green only for a diagnosis first in the list; an observation is "info", never a success card
    const kind = level === "observation" ? "info" : rank === 0 && level !== "weak" && level !== "likely" ? "success" : "note";
    const box = el("div", null, `admonition ${kind} eb-card eb-${level}`);
    const title = el("h2", null, "admonition-title");    // a heading per card: the results can be read by heading
    title.appendChild(link(`${r.id} · ${(lang === "zh" && m.title_zh) || m.title || ""}`, siteUrl("entry", { id: r.id })));
    box.appendChild(title);
    const conf = el("p", null, "eb-confidence");
    conf.appendChild(el("strong", words));
    conf.appendChild(el("span", t("score", Number.isInteger(r.score) ? r.score : Number(r.score).toFixed(2)), "eb-score"));
    box.appendChild(conf);
    // A generic line's note is the confidence line's; a message page's is, in Chinese, the confidence line and the
    // message block below (both translated), so the English note is not repeated there.
    if (r.note && !r.generic && !(lang === "zh" && r.message_page)) box.appendChild(el("p", `(${r.note})`, "eb-note"));
    if (r.environment && r.environment.length) {             // the log's own facts and, with a facts file, the machine's
      const env = el("ul", null, "eb-environment");
      r.environment.forEach((why) => { const li = el("li"); li.appendChild(el("strong", t("environment"))); li.appendChild(doc.createTextNode(why)); env.appendChild(li); });
      box.appendChild(env);
    }
    if (m.cosmetic) box.appendChild(el("p", t("cosmetic"), "eb-cosmetic"));
    const cause = (lang === "zh" && m.cause_zh) || m.cause;
    if (cause) { const p = el("p"); p.appendChild(el("strong", t("cause"))); rich(p, cause); box.appendChild(p); }
    const fix = (lang === "zh" && m.fix_zh) || m.fix;
    if (fix) { const p = el("p"); p.appendChild(el("strong", t("fix", m.steps || 1))); rich(p, fix); box.appendChild(p); }
    if (m.code) box.appendChild(codeBlock(m.code));
    const acts = el("p", null, "eb-actions");
    acts.appendChild(link(t("openFix"), siteUrl("fix", { id: r.id }), "md-button md-button--primary"));
    acts.appendChild(doc.createTextNode(" "));
    acts.appendChild(link(t("entry"), siteUrl("entry", { id: r.id }), "md-button"));
    box.appendChild(acts);
    const lines = evidence(r);
    if (lines.length) {
      box.appendChild(el("p", t("evidence", lines.length), "eb-evidence-title"));
      const pre = el("pre", null, "eb-evidence");
      lines.slice(0, 8).forEach((l) => pre.appendChild(doc.createTextNode(`${l.source ? l.source + ":" : ""}${String(l.line).padStart(6)}: ${l.text}\n`)));
      if (lines.length > 8) pre.appendChild(doc.createTextNode(t("more", lines.length - 8) + "\n"));
      box.appendChild(pre);
    } else if (level === "likely" && !r.message_page) {   // a message page's cause: its note says why (pageonly.py)
      box.appendChild(el("p", t("likelyWhy"), "eb-evidence-title"));
    }
    const run = el("p", null, "eb-run");
    run.appendChild(doc.createTextNode(t("run")));
    run.appendChild(el("code", `errbook run ${r.id}`));
    box.appendChild(run);
    return box;
  }

  function nextSteps(out, st) {
    const ul = el("ul", null, "eb-next");
    const li1 = el("li");
    const b = el("button", t("nextSearch"), "md-button");
    b.type = "button";
    // the engine's first failure line (the CLI prints the same one); else the paste's first line
    const query = (st.first || firstLine(st.text || "")).slice(0, 160);
    b.addEventListener("click", () => openSearch(query));
    li1.appendChild(b);
    if (st.first) li1.appendChild(el("code", st.first, "eb-first-failure"));
    ul.appendChild(li1);
    const li2 = el("li", t("nextClass"));
    [["Compile time", "class", { klass: "compile" }], ["Runtime", "class", { klass: "runtime" }],
     ["Performance", "class", { klass: "performance" }], ["All entries", "overview"]].forEach(([name, page, vars], i) => {
      if (i) li2.appendChild(doc.createTextNode(" · "));
      li2.appendChild(link(name, siteUrl(page, vars)));
    });
    ul.appendChild(li2);
    const li3 = el("li", t("nextAdd"));
    li3.appendChild(link(t("nextAddLink"), siteUrl("contributing")));
    ul.appendChild(li3);
    out.appendChild(ul);
  }

  /* The guided finder (finder.js, a port of triage/finder.py) for a log with no diagnosis: at most three
     questions, one click each, then at most five entries with the check that confirms each. */
  function finderBox(st, bundle) {
    const data = bundle.finder;
    const box = el("div", null, "admonition question eb-finder");
    box.appendChild(el("p", t("fTitle"), "admonition-title"));
    const fs = st.finder || (st.finder = { answers: {} });
    const res = root.ErrbookFinder.find(data, fs.answers, st.text || "", st.scores || null, machineValues);
    const redraw = () => box.replaceWith(finderBox(st, bundle));
    Object.entries(res.inferred).forEach(([facet, [value, why]]) => box.appendChild(el("p", t("fInferred", facet, value, why), "eb-status")));
    const zh = (en, cn) => (lang === "zh" && cn) || en;
    if (res.question) {
      const q = res.question;
      box.appendChild(el("p", t("fQuestion", q.number, data.max_questions, zh(q.text, q.text_zh), res.candidates), "eb-finder-question"));
      const row = el("p", null, "eb-finder-choices");
      q.choices.forEach((c) => {
        const b = el("button", `${zh(c.label, c.label_zh)} (${c.count})`, "md-button");
        b.type = "button";
        b.dataset.value = c.value;
        b.addEventListener("click", () => { fs.answers[q.facet] = c.value; redraw(); });
        row.appendChild(b);
        row.appendChild(doc.createTextNode(" "));
      });
      box.appendChild(row);
    } else if (!res.shortlist.length) {
      box.appendChild(el("p", t("fNone"), "eb-status"));
    } else {
      box.appendChild(el("p", t("fList", res.shortlist.length, res.candidates), "eb-status"));
      const ol = el("ol", null, "eb-finder-list");
      res.shortlist.forEach((it) => {
        const li = el("li");
        li.appendChild(link(`${it.id} · ${zh(it.title, it.title_zh)}`, siteUrl("entry", { id: it.id })));
        const c = it.check;
        if (c) {
          const p = el("p");
          p.appendChild(el("strong", t(c.kind === "confirm" ? "fConfirm" : "fFirst")));
          rich(p, zh(c.step, c.step_zh));
          li.appendChild(p);
          if (c.code) li.appendChild(codeBlock(c.code));
          const expect = zh(c.expect, c.expect_zh);
          if (expect) { const e = el("p"); e.appendChild(el("strong", t("fExpect"))); rich(e, expect); li.appendChild(e); }
        }
        ol.appendChild(li);
      });
      box.appendChild(ol);
    }
    if (Object.keys(fs.answers).length) {
      const b = el("button", t("fRestart"), "md-button eb-finder-restart");
      b.type = "button";
      b.addEventListener("click", () => { fs.answers = {}; redraw(); });
      box.appendChild(b);
    }
    return box;
  }

  function firstLine(text) { return String(text).split("\n").map((l) => l.trim()).find(Boolean) || ""; }

  /* Material's search runs in this page: fill its box and open it (no navigation, so no request). */
  function openSearch(q) {
    const toggle = doc.getElementById("__search");
    const input = doc.querySelector(".md-search__input");
    if (!input) return;
    if (toggle) { toggle.checked = true; toggle.dispatchEvent(new Event("change")); }
    input.value = q;
    input.focus();
    input.dispatchEvent(new KeyboardEvent("keyup", { bubbles: true }));
    input.dispatchEvent(new Event("input", { bubbles: true }));
  }

  /* The one-line answer, first in the results: the best entry and how sure, or that none is known. */
  function verdictText(st, res, answers, weights, bundle) {
    const title = (r) => { const m = (bundle.entries || {})[r.id] || {}; return (lang === "zh" && m.title_zh) || m.title || ""; };
    if (answers.length && answers[0].level === "likely") return t(answers[0].message_page ? "vMessage" : answers[0].generic ? "vGeneric" : "vLikely", answers[0].id, title(answers[0]));
    const c = st.coverage || {}, more = st.complete === false ? t("vEarly", mb(c.done), mb(c.total)) : "";
    if (answers.length) {
      const level = confidence(answers[0], weights)[0];
      return t("vDiag", answers[0].id, title(answers[0]), t(`${level}W`) || level, answers.length) + more;
    }
    if (st.complete === false) return t("vSoFar", mb(c.done), mb(c.total));    // never "no entry" while lines remain
    if (res.length) return t("vObserved", res.length);
    if (st.unexplained && st.unexplained.length) return t("vUnexplained", st.unexplained.length);
    return st.first ? t("vNoneFirst", st.first) : t("vNone", st.nlines);
  }

  /* Markdown for a ticket or a chat: the verdict and each entry with its page. Never a line of the log. */
  function summaryMarkdown(verdict, res, weights, bundle) {
    const rows = res.slice(0, 5).map((r) => {
      const m = (bundle.entries || {})[r.id] || {};
      const title = ((lang === "zh" && m.title_zh) || m.title || "").replace(/[[\]]/g, "");
      const how = r.level === "likely" ? (r.message_page ? "likely, its message has several known causes" : r.generic ? "likely, from a generic line" : "likely") : r.level === "observation" ? "observation" : `diagnosis, ${confidence(r, weights)[0]} match`;
      return `- [${r.id} · ${title}](${siteUrl("entry", { id: r.id })}) — ${how}`;
    });
    return [`**errbook triage:** ${verdict}`].concat(rows).join("\n") + "\n";
  }

  function copyText(text) {
    // a selected textarea and the copy command: works without the asynchronous clipboard permission
    const ta = el("textarea");
    ta.value = text;
    ta.setAttribute("readonly", "");
    ta.style.position = "fixed"; ta.style.opacity = "0";
    doc.body.appendChild(ta);
    ta.select();
    let ok = false;
    try { ok = doc.execCommand("copy"); } catch (e) { ok = false; }
    ta.remove();
    if (!ok && root.navigator && root.navigator.clipboard) root.navigator.clipboard.writeText(text).catch(() => {});
  }

  const SAVED = "errbook-paste-last";           // sessionStorage: this tab only, never sent anywhere
  function save(st) {
    try {
      // the results and how much was checked, never the log (a big one would not fit, and it stays on the page)
      const keep = { results: st.results, message: st.message, nlines: st.nlines, ms: st.ms, first: st.first, complete: st.complete, unexplained: st.unexplained,
                     skipped: st.skipped, coverage: st.coverage, budget: st.budget, scores: st.scores };
      root.sessionStorage.setItem(SAVED, JSON.stringify(keep));
    } catch (e) { /* storage full or off: nothing is kept */ }
  }
  function saved() {
    try { const v = JSON.parse(root.sessionStorage.getItem(SAVED) || "null"); return v && Array.isArray(v.results) ? v : null; } catch (e) { return null; }
  }

  function render(out, st) {
    shown = st;
    out.replaceChildren();
    out.dataset.state = st.running ? "running" : "done";
    out.dataset.complete = String(st.complete !== false);
    const bundle = root.ERRBOOK_BUNDLE || {};
    const weights = new Map((bundle.signatures || []).map((s) => [`${s.entry}/${s.id}`, s.weight]));
    const bar = el("p", null, "eb-langs");
    [["en", "English"], ["zh", "中文"]].forEach(([k, name]) => {
      const b = el("button", name, "md-button" + (k === lang ? " md-button--primary" : ""));
      b.type = "button";
      b.setAttribute("aria-pressed", String(k === lang));
      b.addEventListener("click", () => {           // the site's choice too: entry pages open in it
        lang = k;
        render(out, st);
        if (root.ErrbookLang) root.ErrbookLang.choose(k);
      });
      bar.appendChild(b);
      bar.appendChild(doc.createTextNode(" "));
    });
    if (st.error) { out.appendChild(el("p", t("error") + st.error, "eb-error")); return; }
    const res = st.results || [];
    const answers = res.filter((r) => r.level !== "observation");
    const verdict = el("p", null, "eb-verdict");
    verdict.appendChild(el("strong", verdictText(st, res, answers, weights, bundle)));
    verdict.tabIndex = -1;
    verdict.setAttribute("role", "status");            // the one live region: only the verdict is announced
    out.appendChild(verdict);
    if (st.restored) out.appendChild(el("p", t("restored"), "eb-status eb-restored"));
    const likelyOnly = answers.length > 0 && answers.every((r) => r.level === "likely");
    const cov = st.coverage || {};
    const head = el("p", !answers.length && st.complete === false ? t("noneSoFar", mb(cov.done), mb(cov.total)) : !res.length ? t("none", st.nlines)
      : !answers.length ? t("observedOnly", res.length, st.nlines, st.ms)
      : t(!likelyOnly ? "found" : answers[0].message_page ? "messageFound" : answers[0].generic ? "genericFound" : "likelyFound", answers.length, st.nlines, st.ms), "eb-status");
    out.appendChild(head);
    if (machineValues) out.appendChild(el("p", t("facts", Object.keys(machineValues).length), "eb-status eb-facts"));
    if (st.complete === false) {                       // what was checked, and a way to check the rest
      const warn = el("div", null, "admonition warning eb-partial");
      const sec = Math.max(1, Math.round(st.budget / 1000));
      warn.appendChild(el("p", t("partial", sec), "admonition-title"));
      warn.appendChild(el("p", cov.tailSize ? t("coverage", mb(cov.done), mb(cov.total), cov.earlyLines || 0, mb(cov.tailSize))
        : t("coverageOrder", mb(cov.done), mb(cov.total)), "eb-coverage"));
      (st.skipped || []).forEach(([a, b]) => warn.appendChild(el("p", t("skipped", a, b))));
      if (st.running) warn.appendChild(el("p", st.progress || t("working"), "eb-progress"));
      else if (st.more) {
        const b = el("button", t("cont", sec), "md-button md-button--primary eb-continue");
        b.type = "button";
        b.addEventListener("click", st.more);
        const p = el("p");
        p.appendChild(b);
        warn.appendChild(p);
      }
      out.appendChild(warn);
    }
    if (st.note) out.appendChild(el("p", st.note));
    res.slice(0, 5).forEach((r, rank) => out.appendChild(card(r, rank, bundle, weights)));
    if (st.message) out.appendChild(messageBox(st.message, bundle));
    if (st.unexplained && st.unexplained.length) {          // as Dr. CI does: what the matches leave unexplained
      out.appendChild(el("p", t("unexplained", st.unexplained.length, st.unexplained.length >= 10), "eb-evidence-title eb-unexplained-title"));
      const pre = el("pre", null, "eb-evidence eb-unexplained");
      st.unexplained.forEach((l) => pre.appendChild(doc.createTextNode(`${String(l.line).padStart(6)}: ${l.text}\n`)));
      out.appendChild(pre);
    }
    if (!answers.length && !st.running && st.complete !== false) nextSteps(out, st);
    const fnd = bundle.finder;
    if (!st.running && st.complete !== false && !res.some((r) => r.level === "diagnosis") && fnd && fnd.entries && fnd.entries.length
        && root.ErrbookFinder) {
      out.appendChild(finderBox(st, bundle));
    }
    if (!st.running) {
      const cp = el("button", t("copySummary"), "md-button eb-copy-summary");
      cp.type = "button";
      cp.addEventListener("click", () => {
        copyText(summaryMarkdown(verdict.textContent, res, weights, bundle));
        cp.textContent = t("summaryCopied");
      });
      bar.appendChild(cp);
    }
    out.appendChild(bar);
    if (!st.running && !st.restored) save(st);
    if (!st.running && st.focus) {                      // after Match: the verdict is where the reader lands
      st.focus = false;
      verdict.focus({ preventScroll: true });
      verdict.scrollIntoView({ block: "start" });
    }
  }

  /* ---- one message, several causes (the CLI's cli/msgblock.py): the message's causes ranked by the evidence ---- */
  const MSG_TEXT = {
    en: {
      head: (n) => `This message has ${n} known cause${n === 1 ? "" : "s"}, ranked by the evidence in this log${machineValues ? " and machine" : ""}:`,
      page: "All causes of this message", found: (k, n) => `${k} of ${n} evidence found`,
      state: { found: "found", missing: "not in the log", absent: "not on this machine", unknown: "not checked (load machine facts)" },
      other: "Also reported, no entry yet: ", thread: "thread",
    },
    zh: {
      head: (n) => `这条消息有 ${n} 个已知原因，按本日志${machineValues ? "和机器信息" : ""}中的证据排序：`,
      page: "这条消息的全部原因", found: (k, n) => `找到 ${k}/${n} 项证据`,
      state: { found: "已找到", missing: "日志中没有", absent: "本机不符合", unknown: "未检查（可载入机器信息）" },
      other: "其他已报告的原因（尚无条目）：", thread: "讨论",
    },
  };

  function messageBox(m, bundle) {
    const mt = MSG_TEXT[lang];
    const box = el("div", null, "admonition info eb-message");
    box.dataset.message = m.id;
    box.appendChild(el("p", mt.head(m.causes.length), "admonition-title"));
    box.appendChild(el("p", null, "eb-message-line")).appendChild(el("code", m.line.text));
    const ol = el("ol", null, "eb-message-causes");
    m.causes.forEach((c) => {
      const li = el("li");
      li.dataset.entry = c.entry;
      const meta = (bundle.entries || {})[c.entry] || {};
      li.appendChild(link(`${c.entry} · ${(lang === "zh" && meta.title_zh) || meta.title || ""}`, siteUrl("entry", { id: c.entry })));
      li.appendChild(doc.createTextNode(` (${mt.found(c.score, c.evidence.length)})`));
      const ul = el("ul");
      c.evidence.forEach((e) => {
        const item = el("li", `${e.state === "found" ? "✓" : "·"} ${lang === "zh" ? e.says_zh : e.says} — ${mt.state[e.state]}`, `eb-ev-${e.state}`);
        (e.lines || []).forEach((l) => item.appendChild(el("code", ` ${l.line}: ${l.text}`)));
        ul.appendChild(item);
      });
      li.appendChild(ul);
      ol.appendChild(li);
    });
    box.appendChild(ol);
    (m.other_causes || []).forEach((o) => {
      const p = el("p", mt.other + (lang === "zh" ? o.says_zh : o.says) + " ");
      p.appendChild(link(mt.thread, o.source));
      box.appendChild(p);
    });
    box.appendChild(el("p")).appendChild(link(mt.page, siteUrl("message", { id: m.id })));
    return box;
  }

  /* ---- matching: one worker for the page's life (triage-worker.js), given the log itself ----
     A log is {text} (the box) or {file} (a chosen file, or a big paste kept as a Blob): the worker reads it, looks
     at its end and error lines first, then checks every line in order for a time budget a pass (the form's
     data-budget-ms) and says how far it got; "Continue" runs another pass. */
  function Matcher(budgetOf, ready, progress) {
    const me = this;
    let w = null, job = null, dog = null, run = 0;
    const start = () => {
      if (!WORKER_URL || typeof Worker === "undefined") return null;
      try { w = new Worker(WORKER_URL); } catch (e) { w = null; return null; }
      w.onmessage = (ev) => receive(ev.data || {});
      w.onerror = (ev) => {
        ev.preventDefault();
        const j = job;
        job = null;
        clearTimeout(dog);
        if (j) j.update(Object.assign(j.base(), { error: ev.message || "worker error" }));
      };
      return w;
    };
    start();
    if (!w) ready();

    const watch = (j) => { clearTimeout(dog); dog = setTimeout(() => stuck(j), HANG_MS); };
    const send = (j) => {
      w.postMessage({ type: "match", id: j.id, file: j.log.file || null, text: j.log.file ? null : j.log.text, facts: machineValues,
                      budget: j.budget, tail: TAIL, skip: j.skip, noEarly: j.noEarly });
      watch(j);
    };
    // No word for HANG_MS: a pattern is stuck on a line. A fresh worker starts the log again without that piece
    // (or without the early look), and the results say which lines were not checked.
    function stuck(j) {
      if (j !== job) return;
      w.terminate();
      start();
      if (j.at && j.at.phase === "order") j.skip.push(j.at.lines); else j.noEarly = true;
      j.at = null;
      send(j);
    }

    function receive(m) {
      if (m.ready) { ready(); return; }
      const j = job;
      if (!j || m.id !== j.id) return;
      watch(j);
      if (m.type === "progress") {
        if (m.phase === "order") j.at = m;
        progress(m.phase === "read" ? t("reading", mb(m.done), mb(m.total)) : m.phase === "early" ? t("looking")
          : t("ordered", mb(m.done), mb(m.total)));
        return;
      }
      if (m.type === "error") { clearTimeout(dog); job = null; j.update(Object.assign(j.base(), { error: m.error })); return; }
      const notes = [m.cut ? t("big", 64) : "", !m.encoding || m.encoding.startsWith("utf-8") ? ""
        : t("decoded", m.encoding.toUpperCase().replace(/-(LE|BE)$/, " $1"))].filter(Boolean).join(" ");
      const st = Object.assign(j.base(), {
        results: m.results, message: m.message || null, scores: m.scores || null, first: m.first || null,
        unexplained: m.unexplained || [], nlines: m.nlines, note: notes,
        complete: m.type === "done" && m.complete, running: m.type === "early", skipped: m.skipped || [],
        coverage: { done: m.done, total: m.total, earlyLines: m.earlyLines, tailSize: m.tailSize },
      });
      if (m.type !== "early") clearTimeout(dog);
      if (m.type === "pass") st.more = () => me.more();
      if (m.type === "done") job = null;
      j.last = st;
      j.update(st);
    }

    this.match = (log, update) => {
      const j = { id: ++run, log: log, update: update, t0: performance.now(), budget: budgetOf(), skip: [], noEarly: false, at: null };
      j.base = () => ({ text: log.head || log.text || "", budget: j.budget, ms: Math.round(performance.now() - j.t0) });
      job = j;
      if (w) { send(j); return; }
      // no Worker here: the whole log on this thread, at once
      const whole = log.file ? log.file.arrayBuffer().then((b) => api.decodeLog(new Uint8Array(b)).text) : Promise.resolve(log.text);
      whole.then((text) => {
        const eng = api.compile(root.ERRBOOK_BUNDLE);
        const r = api.triageText(eng, text, "", machineValues);
        const fnd = root.ERRBOOK_BUNDLE.finder;
        update(Object.assign(j.base(), { results: r.results, message: r.message, first: r.firstFailureLine, complete: true,
                                         nlines: text.split(/\r\n|\r|\n/).length,
                                         unexplained: api.unexplainedLines(eng, text, r.results, 10),
                                         scores: fnd && root.ErrbookFinder ? root.ErrbookFinder.logScores(api, eng, fnd, text) : null }));
      });
    };
    // Another pass over the rest of the log, with a new budget.
    this.more = () => {
      const j = job;
      if (!j || !w) return;
      j.budget = budgetOf();
      w.postMessage({ type: "continue", id: j.id, budget: j.budget });
      watch(j);
      j.update(Object.assign({}, j.last, j.base(), { running: true, more: null, progress: t("ordered", mb(j.last.coverage.done), mb(j.last.coverage.total)) }));
    };
  }

  // The values of a machine-facts file (errbook doctor --collect), read in this page only; null when none.
  let machineValues = null;

  function init() {
    const form = doc.getElementById("errbook-triage");
    if (!form || !root.ERRBOOK_BUNDLE) return;
    const area = doc.getElementById("errbook-log");
    const out = doc.getElementById("errbook-results");
    const file = doc.getElementById("errbook-file");
    const state = root.ErrbookPaste = { ready: false };
    const site = root.ErrbookLang;
    if (site && TEXT[site.chosen()]) lang = site.chosen();
    doc.addEventListener("eb-lang", (ev) => {
      if (!TEXT[ev.detail] || ev.detail === lang) return;
      lang = ev.detail;
      if (shown && !shown.running) render(out, shown);
    });
    const progress = (text) => { const p = out.querySelector(".eb-progress"); if (p) p.textContent = text; };
    const matcher = new Matcher(() => Number(form.dataset.budgetMs) || 10000, () => { state.ready = true; }, progress);
    let focusNext = false;
    // A big log (a chosen file, or a paste over BIG_PASTE) is held here, never put in the text box: the box shows
    // nothing and a short preview with the size says what will be matched.
    let held = null;
    const heldBox = el("div", null, "eb-held");
    heldBox.id = "errbook-held";
    heldBox.hidden = true;
    area.insertAdjacentElement("afterend", heldBox);
    const drop = () => { held = null; heldBox.hidden = true; heldBox.replaceChildren(); };
    const hold = (log) => {
      held = log;
      area.value = "";
      heldBox.replaceChildren();
      const p = el("p", null, "eb-held-title");
      p.appendChild(el("strong", log.name));
      p.appendChild(doc.createTextNode(t("held", mb(log.file.size)) + " "));
      const clear = el("button", t("clear"), "md-button");
      clear.type = "button";
      clear.addEventListener("click", () => { drop(); area.focus(); });
      p.appendChild(clear);
      heldBox.appendChild(p);
      heldBox.appendChild(el("pre", log.head.split(/\r\n|\r|\n/).slice(0, 6).map((l) => l.slice(0, 200)).join("\n"), "eb-preview"));
      heldBox.hidden = false;
    };
    const go = () => {
      const log = held && !area.value.trim() ? held : { text: area.value };
      if (log !== held) drop();
      out.replaceChildren(el("p", t("working"), "eb-status eb-progress"));
      out.dataset.state = "running";
      out.dataset.complete = "false";
      focusNext = true;
      matcher.match(log, (st) => {
        if (!st.running && focusNext) { st.focus = true; focusNext = false; }
        render(out, st);
      });
    };
    form.addEventListener("submit", (ev) => { ev.preventDefault(); go(); });
    area.addEventListener("keydown", (ev) => {             // Ctrl+Enter (Cmd+Enter on a Mac) matches
      if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) { ev.preventDefault(); go(); }
    });
    area.addEventListener("input", () => { if (held && area.value.trim()) drop(); });   // typing starts a new log
    // A paste is matched at once: a big one from memory (as a Blob, read by the worker like a file), a small one
    // once it is in the box, if it is all the box holds.
    area.addEventListener("paste", (ev) => {
      const s = ev.clipboardData ? ev.clipboardData.getData("text/plain") || ev.clipboardData.getData("text") : "";
      if (s.length > BIG_PASTE) {
        ev.preventDefault();
        hold({ file: new Blob([s], { type: "text/plain" }), name: t("pasted"), head: s.slice(0, 4000) });
        go();
      } else if (s && !area.value.trim()) setTimeout(() => { if (area.value.trim()) go(); }, 0);
    });
    // Back from an entry: the last results again, from this tab's session storage (a page the browser kept whole
    // in its back-forward cache still shows them as they were)
    const last = saved();
    if (last && !out.childElementCount) render(out, Object.assign(last, { restored: true }));
    const factsInput = doc.getElementById("errbook-facts");
    if (factsInput) {
      factsInput.addEventListener("change", () => {
        const f = factsInput.files[0];
        if (!f) { machineValues = null; return; }
        f.arrayBuffer().then((buf) => {
          const r = api.readFacts(buf, root.ERRBOOK_BUNDLE);   // bytes: sizes and UTF-8 read as the CLI reads them
          machineValues = r.values;
          const msg = r.error ? t("facts_bad", r.error) : t("facts", Object.keys(r.values).length);
          out.replaceChildren(el("p", msg, r.error ? "eb-error" : "eb-status"));
          if (!r.error && (held || area.value.trim())) go();
        });
      });
    }
    if (file) {
      file.addEventListener("change", () => {
        const f = file.files[0];
        if (!f) return;
        // the preview: its first bytes, decoded as the worker will decode the whole (UTF-16/32 by BOM or NULs)
        f.slice(0, 4000).arrayBuffer().then((buf) => {
          hold({ file: f, name: f.name, head: api.decodeLog(new Uint8Array(buf)).text });
          go();
        });
      });
    }
  }
  if (doc.readyState === "loading") doc.addEventListener("DOMContentLoaded", init); else init();
})(window);
