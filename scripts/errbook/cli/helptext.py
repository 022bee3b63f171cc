"""What every subcommand's --help ends with: an Examples section, and help for the flags several commands share.

Kept as data in one place, so each subcommand module stays about its own options, and a test (tests/
test_cli_terminal.py) holds every subcommand to it: each has examples, each action has help.
"""
from __future__ import annotations

import argparse

# Flags several subcommands share, with one wording; a subcommand's own help for them wins.
COMMON_FLAG_HELP = {
    "--json": "print machine-readable JSON on stdout instead of text",
    "--no-progress": "never show the progress line (it is shown only when stderr is a terminal)",
    "--no-color": "no colour (also: NO_COLOR set, or stdout not a terminal)",
}

# Help for arguments whose subcommand module gives none yet (those modules are being changed elsewhere); a module's
# own help wins, so an entry here can go once its module has one.
FALLBACK_HELP = {
    ("new", "klass"): "the entry's class: compile, runtime or performance",
    ("new", "title"): "the entry's title: the error message or the problem in a few words",
}

EXAMPLES: dict[str, list[tuple[str, str]]] = {
    "errbook": [("errbook triage build.log", "which entry explains this log?"),
                ("errbook show RMN-0090", "read that entry, fix first"),
                ('errbook search "invalid device function"', "search the book as the site does"),
                ("errbook COMMAND --help", "a command's options and examples")],
    "validate": [("errbook validate", "every entry: schema and cross-checks"),
                 ("errbook validate errata/runtime/RMN-0090.yaml", "one entry, with the cross-checks it needs"),
                 ("errbook validate --json", "the findings as JSON")],
    "new": [('errbook new runtime "hipErrorOutOfMemory on a 64 GB card"', "scaffold an entry and its runbook")],
    "serve": [("errbook serve", "the site on http://127.0.0.1:8000, rebuilt as entries change"),
              ("errbook serve --port 8001", "another port when 8000 is taken")],
    "build": [("errbook build", "mkdocs build --strict into site/")],
    "triage": [("errbook triage build.log", "which entries explain this log?"),
               ("dmesg | errbook triage", "read standard input"),
               ("errbook triage a.log b.log --top 1 --json", "one result per log, as JSON")],
    "find": [("errbook find", "on a terminal: up to three questions, then the entries that fit"),
             ("errbook find --log slow-training.log", "ask, and order the list by similarity to the log"),
             ("errbook find --answer component=pytorch --answer happened=slow --json",
              "answers given in advance: the next question, or the list, as JSON"),
             ("errbook find --facts facts.json -a happened=crash", "the GPU family from doctor's facts file")],
    "show": [("errbook show RMN-0090", "the entry, fix first"),
             ("errbook show hipErrorNoBinaryForGpu --lang zh", "by alias, in Chinese"),
             ("errbook show RMN-0090 --json", "the entry's data and its verification status")],
    "search": [('errbook search "pytorch doesn\'t see my gpu"', "rank entries as the site's search does"),
               ('errbook search "hipErrorNoBinaryForGpu" --top 1 --json', "the best entry as JSON")],
    "doctor": [("errbook doctor", "known problems this machine is exposed to"),
               ("errbook doctor --collect > facts.json", "save the facts to triage another machine's log")],
    "mcp": [("errbook mcp", "what an assistant starts: MCP on stdin/stdout"),
            ("errbook mcp --site-url https://errbook.example.org/", "link answers to the team's site")],
    "run": [("errbook run RMN-0090", "one runbook as a trial: the team's ledger and run pages untouched"),
            ("errbook run --changed --tier static,toolchain --record", "re-run what changed and record it"),
            ("errbook run --changed --dry-run", "which runbooks lack a record of this machine")],
    "eval": [("errbook eval", "triage quality on the labelled corpus"),
             ("errbook eval --misses", "also the dev split's misses")],
    "stale": [("errbook stale", "entries due for review today"),
              ("errbook stale --today 2027-07-01 --json", "as of a date, as JSON")],
    "platform": [("errbook platform", "tiers, toolchains and GPU of this machine"),
                 ("errbook platform --json", "the raw form")],
    "ledger": [("errbook ledger", "the verification ledger, bad lines reported"),
               ("errbook ledger --json", "as JSON")],
}


def examples_text(name: str) -> str:
    rows = EXAMPLES.get(name, [])
    width = max((len(c) for c, _ in rows), default=0)
    return "Examples:\n" + "\n".join(f"  {c:<{width}}  # {why}" for c, why in rows)


class ExamplesFormatter(argparse.HelpFormatter):
    """argparse's formatter, except that the Examples section keeps its lines (descriptions are still filled)."""

    def _fill_text(self, text, width, indent):
        if text.startswith("Examples:"):
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)


def finish(name: str, parser: argparse.ArgumentParser) -> None:
    """Adds the Examples epilog, the shared flags' help where a subcommand gave none, and --no-color."""
    parser.epilog = examples_text(name)
    if parser.formatter_class is argparse.HelpFormatter:
        parser.formatter_class = ExamplesFormatter
    if not any("--no-color" in a.option_strings for a in parser._actions):
        parser.add_argument("--no-color", action="store_true", help=COMMON_FLAG_HELP["--no-color"])
    for action in parser._actions:
        if action.help is None:
            names = action.option_strings or [action.dest]
            known = [FALLBACK_HELP[(name, o)] for o in names if (name, o) in FALLBACK_HELP]
            known += [COMMON_FLAG_HELP[o] for o in names if o in COMMON_FLAG_HELP]
            if known:
                action.help = known[0]
