"""Measure the message blocks on the labelled corpus: on the logs that contain a message page's message, how often
the right entry is first among the page's ranked causes, against how often it is first in today's results.

Run: `python -m errbook.triage.msgeval [--json]` (a few seconds; `errbook eval` is not needed). Only the first stage
runs (the logs with a message all have a diagnostic line), and a log is grouped as `errbook eval` groups it: seen
(errata/corpus/real/, or a thread an entry cites), or the dev / test split of the unseen logs.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from errbook.common import paths
from errbook.kb import drafts
from errbook.kb import entries as entries_mod
from errbook.triage import corpus, evaluate, matcher, msgscan, pipeline, ranking, retrieval
from errbook.triage import messages as msg

GROUPS = ("seen", "dev", "test")


def _group(c: dict, cited: set[str]) -> str:
    thread = retrieval.thread_of(c.get("thread") or c.get("source", ""))
    if c["folder"] == "real" or thread in cited or retrieval.thread_of(c.get("duplicate_of", "")) in cited:
        return "seen"
    return corpus.split_of(thread, c.get("split"))


def _message_of(pages: list[dict], text: str) -> dict | None:
    for p in pages:
        m = matcher.Matcher([matcher.build_signature("MSG", {"id": s["id"], "pattern": s["pattern"],
                                                             "ignore_case": bool(s.get("ignore_case"))})
                             for s in p["signatures"]])
        if m.match_text(text):
            return p
    return None


def rows(root: Path) -> list[dict]:
    loaded, _ = entries_mod.load_all(root)
    active = [e for e in entries_mod.active(loaded) if not drafts.is_draft(e.data)]
    know = ranking.Knowledge(active, index=None, cal={}, pages=pipeline.message_pages(root, active))
    m = pipeline.build_matcher(active, skipped=[], pages=know.pages)
    cited = evaluate.cited_threads(loaded)
    pages = msgscan.usable_pages(root)
    labelled, _ = evaluate.load_set(root)
    out = []
    for c in labelled:
        text = c["path"].read_text(encoding="utf-8", errors="replace")
        page = _message_of(pages, text)
        if page is None:
            continue
        res = ranking.match_text(m, know, text)
        hit = msg.deciding_page(pages, res)
        block = msgscan.block_of(hit[0], hit[1], [str(c["path"])], None) if hit else None
        exp = str(c.get("expect", "none"))
        causes = [x["entry"] for x in block["causes"]] if block else []
        out.append({"name": c["name"], "message": page["id"], "expect": exp, "group": _group(c, cited),
                    "results_first": res[0]["id"] if res else None, "block": block["id"] if block else None,
                    "causes_first": causes[0] if causes else None, "cause_listed": exp in causes})
    return out


def summary(rs: list[dict]) -> dict:
    """Per group: logs with an entry as their label, right first in results, right first among the causes (of the
    logs with a block), and right first when the block's order is read (block shown) else the results'."""
    out = {}
    for g in GROUPS:
        sel = [r for r in rs if r["group"] == g and r["expect"] != "none"]
        with_block = [r for r in sel if r["block"]]
        out[g] = {"logs": len(sel), "none_logs": sum(r["group"] == g and r["expect"] == "none" for r in rs),
                  "results_first": sum(r["results_first"] == r["expect"] for r in sel),
                  "block_shown": len(with_block),
                  "cause_listed": sum(r["cause_listed"] for r in with_block),
                  "causes_first": sum(r["causes_first"] == r["expect"] for r in with_block),
                  "block_or_results_first": sum((r["causes_first"] if r["block"] else r["results_first"])
                                                == r["expect"] for r in sel)}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m errbook.triage.msgeval", description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", action="store_true", help="every row and the summary as JSON")
    args = ap.parse_args(argv)
    rs = rows(paths.repo_root())
    s = summary(rs)
    if args.json:
        print(json.dumps({"rows": rs, "summary": s}, indent=1))
        return 0
    for r in rs:
        print(f"{r['group']:5} {r['message']:24} expect {r['expect']:9} results {str(r['results_first']):9} "
              f"causes {str(r['causes_first']):9} {r['name']}")
    print("\n| group | logs (entry label) | right first in results | block shown | right cause listed | "
          "right cause first among causes | `none` logs |\n|---|---|---|---|---|---|---|")
    for g, v in s.items():
        print(f"| {g} | {v['logs']} | {v['results_first']} | {v['block_shown']} | {v['cause_listed']} | "
              f"{v['causes_first']} | {v['none_logs']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
