"""`errbook eval`: triage quality on the labelled corpus (triage/evaluate.py), and calibration of the second stage."""
from __future__ import annotations

import argparse
import json
import sys

from errbook.cli.common import root_of
from errbook.cli.exitcodes import ExitCode
from errbook.common import term


def add_parser(sub) -> None:
    s = sub.add_parser("eval", help="triage accuracy on the labelled evaluation logs in errata/corpus/",
                       description="Top-1/top-3, abstention and confidently-wrong rates on labelled logs, split into "
                                   "seen (their thread is cited by an entry: training-set figures) and unseen (dev "
                                   "split for tuning, test split for reporting), and the false-positive rate on "
                                   "benign logs. The second stage is scored leave-one-thread-out.")
    s.add_argument("--json", action="store_true")
    s.add_argument("--rows", action="store_true", help="with --json: every log's result")
    s.add_argument("--misses", action="store_true", help="list the misses of the dev split and the false positives")
    s.add_argument("--show-test", action="store_true",
                   help="with --misses: also the test split's misses (looking at them turns test logs into dev logs)")
    s.add_argument("--by-round", action="store_true",
                   help="also the figures of each collection round's dev and test halves")
    s.add_argument("--calibrate", action="store_true", help="choose the second stage's thresholds on the dev split")
    s.add_argument("--write", action="store_true", help="with --calibrate: save them in data/calibration.json")
    s.set_defaults(fn=run)


def run(args: argparse.Namespace) -> int:
    from errbook.triage import corpus, evaluate
    status = term.Progress("eval", 0, enabled=not args.json)      # a terminal's only sign of life for minutes
    status.step(0, "loading the entries and the labelled logs")
    try:
        ev = evaluate.Evaluator(root_of(args))
    except evaluate.LabelError as e:
        status.close()
        print(f"errbook eval: {e}", file=sys.stderr)
        return ExitCode.ERROR
    cal = None
    if args.calibrate:
        status.step(0, "calibrating the second stage on the dev split")
        cal = ev.calibrate()
        note = ("Second-stage thresholds, calibrated by `errbook eval --calibrate --write` on the dev split only "
                f"({sum(c['split'] == 'dev' for c in ev.benign)} benign and the unseen dev logs).")
        if args.write:
            corpus.CALIBRATION_PATH.write_text(json.dumps(dict(cal, note=note), indent=2) + "\n", encoding="utf-8")
    status.close()
    with term.Progress("eval: logs scored", len(ev.labelled) + len(ev.benign), enabled=not args.json) as bar:
        res = ev.run(cal, progress=lambda name: bar.step(1, name))
    if cal is not None:
        res["calibration"] = cal
    res["finder"] = ev.finder()
    if args.json:
        res = {k: v for k, v in res.items() if k != "rows" or args.rows}
        if not args.rows:
            res["finder"] = {k: v for k, v in res["finder"].items() if k != "rows"}
        print(json.dumps(res, indent=1, ensure_ascii=False))
        return ExitCode.OK
    _print_text(res, args)
    return ExitCode.OK


def _pct(x) -> str:
    """A rate, or n/a where there was nothing to count (a split with no logs)."""
    return "  n/a " if x is None else f"{x:6.1%}"


def _line(name: str, r: dict) -> None:
    pct = _pct
    print(f"{name:<26} {r['logs']:4d} logs  top-1 {pct(r['top1'])}  top-3 {pct(r['top3'])}  "
          f"abstained {pct(r['abstained'])}  confidently wrong {pct(r['confidently_wrong'])}  "
          f"second stage {pct(r['answered_by_second_stage'])}")


def _print_text(res: dict, args: argparse.Namespace) -> None:
    print("Figures to believe: unseen test (threads no entry cites; thresholds were not tuned on them).")
    _line("unseen, test split", res["unseen_test"])
    _line("unseen, dev split", res["unseen_dev"])
    _line("unseen, all", res["unseen"])
    for k, r in res["unseen_by_class"].items():
        _line(f"  unseen, class {k}", r)
    for k, r in res["unseen_by_kind"].items():
        _line(f"  unseen, {k}", r)
    if args.by_round:
        for n, by in res["unseen_by_round"].items():
            for g, r in by.items():
                _line(f"  round {n}, {g}", r)
    _line("seen (training set)", res["seen"])
    b = res["benign"]
    print(f"benign logs: {b['logs']}  false positives {b['false_positives']} "
          f"({_pct(b['false_positive_rate']).strip()}; test split {_pct(b['false_positive_rate_test']).strip()}; "
          f"by a signature {b['confident_false_positives']}; observations only, not answers, {b['observations']})")
    _print_finder(res["finder"], res["symptom_only_diagnosed"], args)
    if "calibration" in res:
        print(f"calibration: {res['calibration']}" + (" (written)" if args.write else " (not written; add --write)"))
    if args.misses:
        for r in res["misses"]:
            if r["group"] != "test" or args.show_test:
                print(f"  miss [{r['group']}]: {r['name']} expected {r['expect']} got {r['got']}")
        for r in res["false_positives"]:
            print(f"  false positive [{r['split']}]: {r['name']} -> {r['got']} ({r['level']})")


def _print_finder(fres: dict, diagnosed: list[str], args: argparse.Namespace) -> None:
    """The guided finder on symptom-only logs (triage/findereval.py): the right entry in the top 5."""
    print(f"symptom-only logs given a diagnosis: {len(diagnosed)} (target: none)"
          + (f": {', '.join(diagnosed)}" if diagnosed else ""))
    if not fres:
        return
    print("guided finder on symptom-only logs with an entry (simulated answers; the right entry in the top 5):")
    names = {"label": "answers from the log's own label", "entry": "answers from the expected entry's facets "
                                                                   "(optimistic upper bound)"}
    for src, by in ((k, fres.get(k, {})) for k in ("label", "entry")):
        for group, r in by.items():
            print(f"  {names[src]:<62} {group:<5} {r['logs']:4d} logs  top-5 {_pct(r['top5'])}  "
                  f"top-1 {_pct(r['top1'])}  questions/log {r['questions']}")
    none = fres.get("none_logs", {})
    if none:
        print("  symptom-only logs labelled none (no entry to find): "
              + ", ".join(f"{g} {n}" for g, n in sorted(none.items())))
    if args.misses:
        for r in fres.get("misses", []):
            if r["group"] != "test" or args.show_test:
                print(f"  finder miss [{r['group']}, {r['source']}]: {r['name']} expected {r['expect']} got "
                      f"{r['got']} after {r['answers']}")
