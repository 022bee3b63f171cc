"""`errbook triage`: rank the entries a log points to (triage/pipeline.py), print them, keep the opt-in tally."""
from __future__ import annotations

import argparse
import json
import signal
import sys

from errbook.cli import msgblock
from errbook.cli.common import positive_int, root_of
from errbook.cli.exitcodes import ExitCode
from errbook.cli.formats import FORMATS
from errbook.common import term

STDIN_PROMPT = "Paste the log, then Ctrl-D (Ctrl-Z Enter on Windows)"
SUMMARY_CHARS, FIX_CHARS, EVIDENCE_CHARS = 400, 300, 200

TRIAGE_HELP = """\
Rank the entries a log points to. First stage: every entry's signatures ("match"). When none names a problem, a
second stage ranks entries by similarity to their text and says "likely"; it abstains when the log looks like
normal output. Lines stating the GPU (gfx id), the ROCm or PyTorch version or ROCm/HIP environment variables
re-rank the candidates through the entries' triggers.

What is read: logs of any size (a big file is scanned by one process per core); UTF-8, or UTF-16 and UTF-32
(found by their BOM or their NUL bytes: Windows PowerShell's > writes UTF-16), decoded as they are read; lines end
at \\n, \\r\\n or a lone \\r (CR-only logs included); JSON-escaped logs (\\n inside a JSON string, as CI systems
and container runtimes export) are split at their escaped newlines; ANSI colours, timestamps and launcher, kernel-log,
journal, container and CI prefixes are ignored; GCC's typographic quotes and Windows paths are read like
clang's quotes and Unix paths. Limits: only the first 64 KiB of a physical line is read; a line longer than
4096 characters is matched in overlapping windows, so a match longer than 256 characters across a window
boundary can be missed.

Speed: the signatures are compiled once for Hyperscan and kept in $ERRBOOK_CACHE (default
$XDG_CACHE_HOME/errbook or ~/.cache/errbook); ERRBOOK_PREFILTER=re2 uses the RE2 path instead (same results).

Answer levels: "diagnosis" (a message that names the problem), "observation" (a condition an entry describes,
worth knowing, not an answer) and "likely" (the second stage; or a message that several known causes print, an
errata/messages page, when no line of the log says which: the answer's "note" says so).

From a terminal, standard input shows a prompt on stderr and ends at one Ctrl-D (Ctrl-Z Enter on Windows).

Exit codes: 0 a diagnosis matched; 1 none did (observations and likely entries may still be listed); 2 error.
"""


def add_parser(sub) -> None:
    s = sub.add_parser("triage", help="match a log (files or stdin) against every entry's signatures",
                       formatter_class=argparse.RawDescriptionHelpFormatter, description=TRIAGE_HELP)
    s.add_argument("files", nargs="*", help="log files; '-' or none reads stdin; several files = one log per rank")
    s.add_argument("--format", choices=FORMATS, default=None,
                   help="text (default); json ({\"matches\": [...], \"stats\": {...}}); for CI: github (workflow "
                        "commands, and a summary to $GITHUB_STEP_SUMMARY), gitlab (Code Quality report), junit, "
                        "sarif (2.1.0), markdown (a pull-request comment); see docs/ci.md")
    s.add_argument("--json", action="store_true", help="the same as --format json")
    s.add_argument("--site-url", metavar="URL", default=None,
                   help="the site's root URL for entry links in the CI formats (default: mkdocs.yml's site_url, "
                        "i.e. $ERRBOOK_SITE_URL; '' for links relative to the site root)")
    s.add_argument("--top", type=positive_int, default=3, help="how many entries to show, 1 or more (default 3)")
    s.add_argument("--tally", metavar="FILE", nargs="?", const="", default=None,
                   help="append the matched entry ids (never the log text) to a local tally file "
                        "(default ~/.local/share/errbook/tally.jsonl); opt-in")
    s.add_argument("--show-tally", action="store_true", help="print the tally's counts per entry and exit")
    s.add_argument("--facts", metavar="FACTS.json",
                   help="facts of the machine the log came from (errbook doctor --collect): re-rank by them")
    s.set_defaults(fn=run)


def run(args: argparse.Namespace) -> int:
    from errbook.triage import tally
    root = root_of(args)
    if args.show_tally:
        return show_tally(tally.tally_path(args.tally or ""))
    files = args.files or ["-"]
    if "-" in files and (sys.stdin is None or sys.stdin.closed):
        print("errbook triage: no input: standard input is closed; give a log file", file=sys.stderr)
        return ExitCode.ERROR
    fmt = args.format or ("json" if args.json else "text")
    if args.json and fmt != "json":
        print(f"errbook triage: --json and --format {fmt} disagree; give one", file=sys.stderr)
        return ExitCode.ERROR
    return triage(root, args.files, args.facts, args.top, fmt, args.tally, args.site_url, no_color=args.no_color)


def _terminal_stdin(files: list[str]):
    """When the log comes from a terminal: a prompt on stderr, and a reader that ends at the first Ctrl-D."""
    from errbook.triage import textenc
    if "-" not in (files or ["-"]) or sys.stdin is None or not sys.stdin.isatty():
        return None
    print(STDIN_PROMPT, file=sys.stderr, flush=True)
    return textenc.TerminalReader(sys.stdin.fileno())


def triage(root, files: list[str], facts_path: str | None, top_n: int, fmt: str, tally_arg: str | None,
           site_url: str | None = None, no_color: bool = False) -> int:
    from errbook.cli import formats
    logs = files or ["-"]
    # a format that reads the log again (its unexplained failure lines) gets standard input spooled to a file
    with formats.loglines.readable(logs, formats.needs_log_lines(fmt)) as read_from:
        return _triage(root, logs, read_from, facts_path, top_n, fmt, tally_arg, site_url, no_color)


def _triage(root, logs: list[str], read_from: list[str], facts_path: str | None, top_n: int, fmt: str,
            tally_arg: str | None, site_url: str | None, no_color: bool) -> int:
    from errbook.cli import formats
    from errbook.cli.formats import base as fbase
    from errbook.cli.formats import context as fcontext
    from errbook.machine import facts as facts_mod
    from errbook.triage import parallel, pipeline, tally
    doctor_facts = None
    if facts_path:
        try:
            doctor_facts = facts_mod.load(facts_path)
        except facts_mod.FactsError as e:
            print(f"errbook triage: {e}", file=sys.stderr)
            return ExitCode.ERROR
    previous = signal.signal(signal.SIGTERM, _terminate)
    # text and JSON show the message block, whose evidence pass reads the log again: keep a copy of stdin
    copy = (msgblock.StdinCopy(_terminal_stdin(read_from) or sys.stdin.buffer)
            if fmt in ("text", "json") and "-" in read_from else None)
    try:
        results, stats, errors = pipeline.triage_files(root, read_from, stdin=copy or _terminal_stdin(read_from),
                                                       doctor_facts=doctor_facts)
        block = _message_block(root, fmt, results, read_from, copy, doctor_facts, logs, site_url)
    except OSError as e:
        print(f"errbook triage: {e}", file=sys.stderr)
        return ExitCode.ERROR
    except parallel.WorkerDied as e:
        print(f"errbook triage: {e}; nothing was matched. Run again, or with less memory pressure", file=sys.stderr)
        return ExitCode.ERROR
    finally:
        signal.signal(signal.SIGTERM, previous)
        if copy is not None:
            copy.close()
    for err in errors:
        print(f"errbook triage: {err} (run errbook validate)", file=sys.stderr)
    top = results[:top_n]
    if fmt == "json":
        # each result's page (site_url, as the CI formats link it) and how many entries were found in all, the
        # count the paste page states; `--top` only cuts the list
        ctx = fcontext.make(root, logs, read_from, top, site_url, unexplained=False)
        for r in top:
            r["url"] = fbase.entry_url(ctx, r["id"])
        out = {"matches": top, "stats": dict(stats, found=len(results))}
        if block is not None:
            out["message"] = block
        print(json.dumps(out, ensure_ascii=False, indent=1))
    elif fmt == "text":
        style = term.style_for(sys.stdout, no_color)
        _print_text(results, top, stats, style)
        if block is not None:
            msgblock.print_block(block, style)
    else:
        formats.emit(fmt, root, logs, read_from, top, stats, site_url)
    if tally_arg is not None and results:
        msg = tally.record_tally(tally_arg, results)
        if msg:
            print(f"errbook triage: {msg}", file=sys.stderr)
    # 0 only for a diagnosis: an observation or a likely entry is not a known cause of a failure
    return ExitCode.OK if results and results[0].get("level") == "diagnosis" else ExitCode.FINDINGS


def _message_block(root, fmt: str, results: list[dict], read_from: list[str], copy, doctor_facts,
                   logs: list[str], site_url: str | None) -> dict | None:
    """The message block (cli/msgblock.py) of text and JSON output, or None."""
    if fmt not in ("text", "json"):
        return None
    from errbook.cli.formats import base as fbase
    from errbook.cli.formats import context as fcontext
    from errbook.machine import facts as facts_mod
    ctx = fcontext.make(root, logs, read_from, [], site_url, unexplained=False)
    values = facts_mod.values_of(doctor_facts) if doctor_facts is not None else None
    return msgblock.explain(root, results, read_from, copy, values, lambda src: fbase.site_url_of(ctx, src),
                            lambda eid: fbase.entry_url(ctx, eid))


def show_tally(path) -> int:
    """Counts per entry. Lines that are not tally records (corrupt, not UTF-8) are counted and reported."""
    from errbook.triage import tally
    try:
        counts, bad = tally.read_tally(path)
    except OSError as e:
        print(f"errbook triage: cannot read the tally {path}: {e.strerror or e}", file=sys.stderr)
        return ExitCode.ERROR
    for k, v in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        print(f"{v:6d}  {k}")
    if bad:
        print(f"errbook triage: {term.plural(bad, 'line')} of {path} "
              f"{'is not a tally record and was' if bad == 1 else 'are not tally records and were'} skipped",
              file=sys.stderr)
    return ExitCode.OK


def _print_text(results: list[dict], top: list[dict], stats: dict, style: term.Style) -> None:
    if not results:
        print(f"no entry matched ({term.plural(stats['lines'], 'line')} read)")
        if stats.get("first_failure_line"):
            print(f"  first failure line: {stats['first_failure_line']}")
            print("  next: search the book for that line (errbook search \"…\", as the site's search box does), "
                  "browse the entries by class,\n        and once the cause is known add an entry: "
                  "errbook new CLASS \"title\"")
        else:
            print("  no line in it reports a failure: paste the part of the log around the error, or search the book "
                  "(errbook search \"words\")")
    elif results[0].get("message_page"):
        print("the log's message has several known causes and no line of it says which; "
              "these are LIKELY (not certain):")
    elif results[0].get("generic"):
        print("the log's only telling line is a generic one, which seldom names the problem alone; "
              "these are LIKELY (not certain):")
    elif results[0].get("level") == "likely":
        print("no message names a known problem; by similarity to the entries' text these are LIKELY (not certain):")
    elif results[0].get("level") == "observation":
        print("no message names a known problem; worth knowing, conditions that entries describe are present:")
    for rank, r in enumerate(top, 1):
        _print_result(rank, r, style)
    if not results or results[0].get("level") != "diagnosis":
        print(FIND_HINT)


# No message names the problem: the guided finder narrows the entries by what the reader knows (cli/find.py).
FIND_HINT = ("next: errbook find --log FILE asks up to three questions (component, what happened, GPU) and lists "
             "the entries that fit")

LEVEL_COLOUR = {"diagnosis": "green", "observation": "dim", "likely": "yellow"}


def _print_result(rank: int, r: dict, style: term.Style) -> None:
    """One ranked entry: its head line, why it matched, the summary and first fix cut at a word with "…"."""
    score = r["score"] if isinstance(r["score"], int) else f"{r['score']:.2f}"
    level = r.get("level", r["confidence"])
    conf = style(level, LEVEL_COLOUR.get(level, "yellow"))
    print(f"{rank}. {style(r['id'], 'bold')}  {style(r['title'], 'bold')}  [{r['class']}, {conf}, score {score}]")
    if r.get("note"):
        print(f"     ({r['note']})")
    for why in r.get("environment", []):
        print(f"     environment: {why}")
    for ev in r.get("evidence", [])[:3]:
        for ln in ev["lines"]:
            where = f"{ln['source']}:" if ln.get("source") else "line "
            print(style(f"     {where}{ln['line']}: ", "dim") + term.cut(ln["text"], EVIDENCE_CHARS))
    print(f"   {term.cut(r['summary'], SUMMARY_CHARS)}")
    print(f"   {style('first fix:', 'green')} {term.cut(r['first_fix'], FIX_CHARS)}")
    print(f"   verify:    {r['runbook']}\n")


def _terminate(signum, frame):
    raise SystemExit(128 + signum)        # unwinds: workers are stopped and temporary files removed
