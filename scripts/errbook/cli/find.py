"""`errbook find`: the guided finder for a log with no diagnostic line (triage/finder.py). On a terminal it asks up
to three numbered questions, one line each; otherwise (or with --json) it prints the next question, or the short
list once the answers given with --answer are enough. Ctrl-D at a question stops asking and shows the list so
far; Ctrl-C stops (exit 130)."""
from __future__ import annotations

import argparse
import json
import os
import select
import sys
from pathlib import Path

from errbook.cli.common import root_of
from errbook.cli.exitcodes import ExitCode
from errbook.common import interrupts, term
from errbook.triage import finder

LOG_BYTES = 16 << 20          # bytes of a log read: its start names what it is; the rest adds little to a query
CODE_LINES = 3                # lines of a check's command shown


def add_parser(sub) -> None:
    s = sub.add_parser("find", help="the guided finder: a few questions, then the entries that fit (for logs with "
                                    "no diagnostic line)",
                       description="Asks at most three questions about the problem (which part of the stack, what "
                                   "happened, which GPU), chosen to narrow the entries most, and lists at most five "
                                   "entries that fit, each with the check that confirms it. A question the log or a "
                                   "facts file already answers is not asked. With --log the list is ordered by "
                                   "similarity to the log (the second stage's BM25).")
    s.add_argument("--answer", "-a", action="append", default=[], metavar="FACET=VALUE",
                   help="an answer given in advance (repeatable): component=..., happened=..., gpu=..., or "
                        "FACET=unknown; --json lists each question's values")
    s.add_argument("--log", metavar="FILE", help="the log ('-' for standard input): orders the list, and may answer "
                                                  "'what happened' (a compiler error, an import error)")
    s.add_argument("--facts", metavar="FACTS.json", help="facts of the machine (errbook doctor --collect): its GPU "
                                                          "family answers 'which GPU'")
    s.add_argument("--lang", choices=("en", "zh"), default="en", help="language of questions and entries")
    s.add_argument("--site-url", help="the site's root URL for entry links (default: mkdocs.yml's site_url)")
    s.add_argument("--json", action="store_true",
                   help="print the next question (with its choices and how many entries each keeps) or, when "
                        "none is left, the short list, as JSON; never asks")
    s.set_defaults(fn=run)


class Session:
    """The finder over one knowledge base: entries, vocabulary, the log's scores and the machine's facts, loaded
    once; `step(answers)` is one call of the pure finder (cli/mcptools.py uses it too)."""

    def __init__(self, root: Path, log: str | None = None, machine: dict | None = None,
                 site_url: str | None = None):
        from errbook.cli.formats import base as fbase
        from errbook.cli.formats import context as fcontext
        from errbook.kb import entries as entries_mod
        from errbook.kb import facets
        from errbook.triage import corpus
        vocab = facets.load(root)
        if vocab is None:
            raise FileNotFoundError(f"{facets.vocabulary_path(root)}: this knowledge base has no facets "
                                    "vocabulary, so the finder has no questions")
        self.vocab = vocab
        loaded, _errors = entries_mod.load_all(root)
        active = list(entries_mod.active(loaded))
        self.entries = finder.from_entries(active, vocab)
        self.log, self.machine = log, machine
        self.scores = finder.log_scores(corpus.shipped_index(root, active), log) if log else None
        conf_url, directory_urls = fcontext.site_config(root)
        self.ctx = fbase.Context(site_url=conf_url if site_url is None else (site_url or None),
                                 directory_urls=directory_urls)

    def url(self, eid: str) -> str:
        from errbook.cli.formats import base as fbase
        return fbase.entry_url(self.ctx, eid)

    def step(self, answers: dict[str, str]) -> finder.Result:
        return finder.find(self.entries, self.vocab, answers, self.log, self.scores, self.machine)


def read_log(name: str) -> str:
    from errbook.triage import textenc
    if name == "-":
        data = sys.stdin.buffer.read(LOG_BYTES)
    else:
        with open(name, "rb") as f:
            data = f.read(LOG_BYTES)
    enc, bom = textenc.sniff(data[:textenc.SNIFF_BYTES])
    return data[bom:].decode(enc, errors="replace")


def run(args: argparse.Namespace) -> int:
    from errbook.machine import facts as facts_mod
    try:
        answers = dict(finder.parse_answer(a) for a in args.answer)
        machine = facts_mod.values_of(facts_mod.load(args.facts)) if args.facts else None
        log = read_log(args.log) if args.log else None
    except (finder.FinderError, facts_mod.FactsError) as e:
        print(f"errbook find: {e}", file=sys.stderr)
        return ExitCode.ERROR
    except OSError as e:
        print(f"errbook find: cannot read {args.log}: {e.strerror or e}", file=sys.stderr)
        return ExitCode.ERROR
    session = Session(root_of(args), log, machine, args.site_url)
    try:
        res = session.step(answers)
    except finder.FinderError as e:
        print(f"errbook find: {e}", file=sys.stderr)
        return ExitCode.ERROR
    style = term.style_for(sys.stdout, args.no_color)
    if args.json:
        print(json.dumps(finder.as_json(res, session.url), ensure_ascii=False, indent=1))
    elif res.question is not None and sys.stdin.isatty() and args.log != "-":
        final = _ask(session, res, args.lang, style)
        if final is None:
            return ExitCode.INTERRUPTED
        res = final
        _print_list(session, res, args.lang, style)
    elif res.question is not None:
        _print_question(res, args.lang, style)
        print(f"answer with: errbook find {' '.join(_flags(args))} --answer {res.question.facet}=VALUE")
    else:
        _print_list(session, res, args.lang, style)
    return ExitCode.OK if res.shortlist else ExitCode.FINDINGS


def _flags(args: argparse.Namespace) -> list[str]:
    out = [f"--answer {a}" for a in args.answer]
    out += [f"--log {args.log}"] if args.log else []
    out += [f"--facts {args.facts}"] if args.facts else []
    return out


def _zh(lang: str, en: str, zh: str) -> str:
    return zh if lang == "zh" else en


def _print_question(res: finder.Result, lang: str, style: term.Style) -> None:
    q = res.question
    assert q is not None
    for facet, (value, why) in res.inferred.items():
        print(style(f"{facet} = {value} ({why})", "dim"))
    print(f"{style(f'Question {q.number} of at most {finder.MAX_QUESTIONS}:', 'bold')} "
          f"{_zh(lang, q.text, q.text_zh)}   ({term.plural(res.candidates, 'entry', 'entries')} fit so far)")
    for n, c in enumerate(q.choices, 1):
        num = 0 if c.value == finder.UNKNOWN else n
        print(f"  {num:>2}. {_zh(lang, c.label, c.label_zh)}  " + style(f"[{c.value}, {c.count}]", "dim"))


def _choice(q: finder.Question, text: str) -> str | None:
    """The value a typed answer names: its number (0: don't know) or the value itself."""
    text = text.strip()
    values = [c.value for c in q.choices]
    if text.isdigit():
        n = int(text)
        if n == 0:
            return finder.UNKNOWN
        known = [v for v in values if v != finder.UNKNOWN]
        return known[n - 1] if 1 <= n <= len(known) else None
    return text if text in values else None


def _read_line(prompt: str) -> str:
    """input() on the terminal, but a Ctrl-C that lands between the prompt and the read still stops it: input()
    blocks in fgets() and a signal taken just before it is only seen after the next line. Here the wait is in
    short select() slices, between which Python runs the handler. Raises EOFError at Ctrl-D on an empty line."""
    sys.stdout.write(prompt)
    sys.stdout.flush()
    fd = sys.stdin.fileno()
    while not select.select([fd], [], [], 0.25)[0]:
        interrupts.raise_if_pending()
    data = os.read(fd, 4096)          # a terminal in canonical mode returns one line per read
    if not data:
        raise EOFError
    return data.decode("utf-8", "replace").rstrip("\r\n")


def _ask(session: Session, res: finder.Result, lang: str, style: term.Style) -> finder.Result | None:
    """The questions on a terminal, one line each; None on Ctrl-C. Ctrl-D stops asking: the list so far."""
    answers = dict(res.answers)
    while res.question is not None:
        q = res.question
        _print_question(res, lang, style)
        while True:
            try:
                line = _read_line(f"choice (0-{len(q.choices) - 1}, Ctrl-D: show the list now): ")
            except EOFError:
                print()
                return res
            except KeyboardInterrupt:
                print()
                return None
            value = _choice(q, line)
            if value is not None:
                break
            print(f"  not a choice: {line.strip()[:40]!r}")
        answers[q.facet] = value
        res = session.step(answers)
        print()
    return res


def _print_list(session: Session, res: finder.Result, lang: str, style: term.Style) -> None:
    given = ", ".join(f"{k}={v}" for k, v in res.answers.items())
    inferred = ", ".join(f"{k}={v}" for k, (v, _why) in res.inferred.items())
    why = "; ".join(x for x in (given and f"answers {given}", inferred and f"from the log/facts {inferred}") if x)
    if not res.shortlist:
        print(f"no entry fits ({why}); try 'unknown' for an answer you are not sure of, or errbook search \"words\"")
        return
    print(f"{len(res.shortlist)} of {term.plural(res.candidates, 'entry', 'entries')} that fit"
          + (f" ({why})" if why else "") + (", most similar to the log first:" if session.scores else ":"))
    for rank, it in enumerate(res.shortlist, 1):
        print(f"{rank}. {style(it.id, 'bold')}  {_zh(lang, it.title, it.title_zh)}  [{it.klass}]")
        print(f"   {session.url(it.id)}")
        if it.check is None:
            continue
        label = "confirm:" if it.check.kind == "confirm" else "first step:"
        print(f"   {style(label, 'green')} {term.cut(_zh(lang, it.check.step, it.check.step_zh), 300)}")
        for ln in it.check.code.splitlines()[:CODE_LINES]:
            print(style(f"     $ {term.cut(ln, 150)}", "dim"))
        expect = _zh(lang, it.check.expect, it.check.expect_zh)
        if expect:
            print(f"     expect: {term.cut(expect, 200)}")
