"""What `errbook mcp`'s tools answer, as plain JSON-ready data: the functions `errbook triage`, `show`, `search`,
`find` and `doctor` call, on text the client sends (a log, a facts document), never on a path it names.

Every answer names its entry id and the entry's page URL (cli/formats: mkdocs.yml's site_url, the one address
rule); a triage answer carries its level (diagnosis, observation, likely). No MCP SDK here: cli/mcpserver.py
adapts these to it, so the answers can be read and tested without it.
"""
from __future__ import annotations

import io
import json
import tempfile
from pathlib import Path
from typing import Any

from errbook.cli import show as show_cli
from errbook.cli.formats import base as fbase
from errbook.cli.formats import context as fcontext
from errbook.common import term
from errbook.errors import ErrbookError

EVIDENCE_LINES = 5        # evidence lines of one triage answer (fbase.LINES_PER_ANSWER's cap)
SHOW_WIDTH = 100          # columns of show's text rendering (the terminal's widest)
TOP_MAX = 20              # the most answers one call returns

VERDICTS = {
    "diagnosis": "a message in the log names a known problem: the first answer is the diagnosis",
    "observation": "no message names a known problem; conditions that entries describe are present (worth knowing, "
                   "not an answer)",
    "likely": "no message names a known problem; by similarity to the entries' text these are likely, not certain",
    "message": "the log's message has several known causes and no line of it says which: these are likely, not "
               "certain (the message block ranks the causes)",
    "generic": "the log's only telling line is a generic one, which seldom names the problem alone: these are "
               "likely, not certain",
    None: "no entry matched",
}


class ToolInputError(ErrbookError, ValueError):
    """An argument a tool cannot use (an unknown entry, a facts document that is not one): the client is told."""


def _json_ready(obj: Any) -> Any:
    """obj with dates and other YAML scalars as strings, as `errbook show --json` prints them."""
    return json.loads(json.dumps(obj, ensure_ascii=False, default=str))


def _top(n: int) -> int:
    if not 1 <= n <= TOP_MAX:
        raise ToolInputError(f"top must be from 1 to {TOP_MAX}, not {n}")
    return n


class Tools:
    """The tools over one checkout. site_url: None for mkdocs.yml's, '' for addresses relative to the site root."""

    def __init__(self, root: Path, site_url: str | None = None):
        self.root = root
        conf_url, directory_urls = fcontext.site_config(root)
        url = conf_url if site_url is None else (site_url or None)
        self.ctx = fbase.Context(site_url=url, directory_urls=directory_urls)

    def url(self, eid: str) -> str:
        return fbase.entry_url(self.ctx, eid)

    def _cite(self, out: dict) -> dict:
        note = fbase.links_note(self.ctx)
        return dict(out, links_note=note) if note else out

    def triage(self, log: str, top: int = 3, facts: str | None = None) -> dict:
        """The log's ranked answers: level, cause, first fix, evidence lines and page, best first."""
        from errbook.triage import pipeline
        doctor_facts = self._facts(facts) if facts else None
        results, stats, _errors = pipeline.triage_files(self.root, ["-"], stdin=io.BytesIO(log.encode("utf-8")),
                                                        doctor_facts=doctor_facts)
        answers = [self._answer(rank, r) for rank, r in enumerate(results[:_top(top)], 1)]
        first = fbase.level_of(results[0]) if results else None
        if results and results[0].get("message_page"):     # likely: a multi-cause message alone (triage/multicause)
            first = "message"
        elif results and results[0].get("generic"):        # likely: a generic line alone (triage/multicause)
            first = "generic"
        keep = ("lines", "environment", "first_failure_line")
        out = {"verdict": VERDICTS[first], "answers": answers,
               "stats": dict({k: stats[k] for k in keep if k in stats}, found=len(results))}
        block = self._message(log, results, doctor_facts)
        if block is not None:       # one message, several known causes: ranked by the evidence, as triage shows
            out["message"] = block
        return self._cite(out)

    def _message(self, log: str, results: list[dict], doctor_facts: dict | None) -> dict | None:
        """The message block of `errbook triage` (cli/msgblock.py), read from a private copy of the log."""
        from errbook.cli import msgblock
        from errbook.machine import facts as facts_mod
        values = facts_mod.values_of(doctor_facts) if doctor_facts is not None else None
        with tempfile.TemporaryDirectory(prefix="errbook-mcp-") as tmp:
            path = Path(tmp) / "log"
            path.write_text(log, encoding="utf-8")
            return msgblock.explain(self.root, results, [str(path)], None, values,
                                    lambda src: fbase.site_url_of(self.ctx, src), self.url)

    def _answer(self, rank: int, r: dict) -> dict:
        return {"rank": rank, "id": r["id"], "url": self.url(r["id"]), "level": fbase.level_of(r),
                "title": r["title"], "class": r["class"], "cause": r["summary"], "first_fix": r["first_fix"],
                "evidence": [{"line": ln["line"], "text": fbase.cap(ln["text"], fbase.LINE_CAP)}
                             for _sig, ln in fbase.evidence(r, EVIDENCE_LINES)],
                "environment": r.get("environment", []), "note": r.get("note", ""),
                "score": r["score"], "runbook": r["runbook"]}

    def show(self, entry: str, lang: str = "en") -> dict:
        """An entry by id or alias: its text fix first (as `errbook show` prints it) and its data."""
        from errbook.kb import entries as entries_mod
        if lang not in ("en", "zh"):
            raise ToolInputError(f"lang must be en or zh, not {lang!r}")
        loaded, _errors = entries_mod.load_all(self.root)
        e = show_cli.find(loaded, entry)
        if e is None:
            raise ToolInputError(f"no entry with the id or alias {entry!r}" + show_cli._suggest(loaded, entry))
        status = show_cli.verification(e, self.root)
        text = "\n".join(show_cli.render(e, status, lang, term.Style(False), SHOW_WIDTH))
        return self._cite(_json_ready({"id": e.id, "url": self.url(e.id), "title": e["title"], "text": text,
                                       "entry": e.data, "verification": status,
                                       "runbook_command": f"errbook run {e.id}"}))

    def search(self, query: str, top: int = 5) -> dict:
        """The entries the site's search box lists for these words, best first."""
        from errbook.web import searchindex
        site = searchindex.for_checkout(self.root)
        rows = [{"id": h["id"], "url": self.url(h["id"]), "title": site.entries[h["id"]]["title"],
                 "class": site.entries[h["id"]]["class"], "score": round(h["score"], 3), "matched": h["words"]}
                for h in site.search(query, _top(top))]
        return self._cite({"query": query, "results": rows})

    def doctor(self, facts: str) -> dict:
        """The known problems a machine (its facts document) is exposed to, each with its evidence (the checks
        that hold, with the facts' values and sources), first fix, runbook and page."""
        from errbook.kb import entries as entries_mod
        from errbook.machine import doctor
        loaded, _errors = entries_mod.load_all(self.root)
        rep = doctor.report(self._facts(facts), list(entries_mod.active(loaded)))
        for row in rep["applies"] + rep["could_not_check"]:
            row["url"] = self.url(row["id"])
        n = len(rep["applies"])
        verdict = (f"{term.plural(n, 'known problem')} {'applies' if n == 1 else 'apply'} to this machine" if n
                   else "no known problem applies to this machine")
        return self._cite(_json_ready(dict(rep, verdict=verdict)))

    def find(self, answers: dict[str, str] | None = None, log: str | None = None,
             facts: str | None = None) -> dict:
        """The guided finder, stateless: the answers so far (facet -> value or "unknown"), optionally the log's
        text and a facts document -> the next question with its choices, or the short list with each entry's
        confirming check (cli/find.py's Session, triage/finder.py)."""
        from errbook.cli.find import Session
        from errbook.machine import facts as facts_mod
        from errbook.triage import finder
        machine = facts_mod.values_of(self._facts(facts)) if facts else None
        session = Session(self.root, log or None, machine, site_url=self.ctx.site_url or "")
        try:
            res = session.step(dict(answers or {}))
        except finder.FinderError as e:
            raise ToolInputError(str(e)) from None
        out = finder.as_json(res, self.url)
        out["verdict"] = (f"question {res.question.number} of at most {finder.MAX_QUESTIONS}: call find again with "
                          f"answers[{res.question.facet!r}] set to a choice's value" if res.question is not None
                          else f"{len(res.shortlist)} of {res.candidates} entries fit the answers" if res.shortlist
                          else "no entry fits the answers: answer 'unknown' where unsure")
        return self._cite(out)

    @staticmethod
    def _facts(text: str) -> dict:
        from errbook.machine import facts as facts_mod
        try:
            return facts_mod.parse(text, "facts")
        except facts_mod.FactsError as e:
            raise ToolInputError(str(e)) from None
