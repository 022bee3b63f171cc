"""The `errbook` command: the parser (one module per subcommand), the terminal wrapper and the failure policy.

Exit codes are cli/exitcodes.py's: 0 fine, 1 findings (invalid entries, failed checks, no triage match, a known
problem applies), 2 usage or input error, 130 interrupted. A failure is never exit 1. A reader that closes our
output early (`| head`) ends the command quietly with exit 0.
"""
from __future__ import annotations

import argparse
import os
import signal
import sys
import traceback

from errbook.cli import (
    build,
    doctor,
    evaluate,
    find,
    helptext,
    ledger,
    mcp,
    new,
    platforminfo,
    run,
    search,
    serve,
    show,
    stale,
    triage,
    validate,
    version,
)
from errbook.cli.exitcodes import ExitCode
from errbook.common import interrupts, term
from errbook.errors import ErrbookError

# In the order `errbook --help` lists them.
SUBCOMMANDS = (validate, new, serve, build, triage, find, show, search, doctor, mcp, run, evaluate, stale,
               platforminfo, ledger)
SHELLS = ("bash", "zsh", "fish", "tcsh", "powershell")


class _PrintCompletion(argparse.Action):
    """--print-completion SHELL: the shell code that makes TAB complete errbook's commands and flags (argcomplete);
    like --version it prints and exits."""

    def __call__(self, parser, namespace, values, option_string=None):
        import argcomplete
        print(argcomplete.shellcode(["errbook"], shell=str(values)), end="")
        parser.exit()


class Parser(argparse.ArgumentParser):
    """argparse's parser with usage errors in one line, pointing to --help (subcommands' parsers are of this class
    too: add_subparsers makes them like their parent)."""

    def error(self, message: str):
        self.exit(ExitCode.ERROR, f"{self.prog}: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    p = Parser(prog="errbook", description="The ROCm migration error notebook toolkit.",
                                epilog=helptext.examples_text("errbook"), formatter_class=helptext.ExamplesFormatter)
    p.add_argument("--version", action=version.VersionAction,
                   help="print the version, the knowledge base read (checkout or installed snapshot), its entry "
                        "count and date, and exit")
    p.add_argument("--root", help="checkout root (default: found from the current directory or $ERRBOOK_ROOT)")
    p.add_argument("--print-completion", metavar="SHELL", choices=SHELLS, action=_PrintCompletion,
                   help="print the shell code for TAB completion and exit: eval \"$(errbook --print-completion "
                        "bash)\" in ~/.bashrc (zsh, fish, tcsh, powershell too)")
    sub = p.add_subparsers(dest="cmd", required=True, metavar="COMMAND",
                           help="one of these (errbook COMMAND --help: its options and examples)")
    for module in SUBCOMMANDS:
        module.add_parser(sub)
    for name, sp in sub.choices.items():
        helptext.finish(name, sp)
    return p


def main(argv: list[str] | None = None) -> int:
    streams = sys.stdout, sys.stderr       # every text printer, argparse's messages included, writes through these
    sys.stdout, sys.stderr = (s if s is None else term.EscapingWriter(s) for s in streams)
    try:
        code = _main(argv)
        if streams[0] is not None:
            streams[0].flush()
        return code
    except BrokenPipeError:
        return _reader_gone(streams[0])
    finally:
        sys.stdout, sys.stderr = streams


def _reader_gone(stdout) -> int:
    """The reader of our output closed it (`errbook triage log | head -1`): stop quietly, with no traceback and no
    "[Errno 32] Broken pipe". stdout now points at /dev/null, so the interpreter's last flush has nowhere to fail."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stdout.fileno())
    except (OSError, AttributeError, ValueError):
        pass
    return ExitCode.OK


def _main(argv: list[str] | None) -> int:
    parser = build_parser()
    _complete(parser)
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:
        return ExitCode.ERROR if e.code not in (0, None) else ExitCode.OK
    interrupts.install()
    if hasattr(signal, "SIGXFSZ"):   # past a file-size limit, write() then fails with EFBIG instead of killing us
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    return _run(args)


def _run(args: argparse.Namespace) -> int:
    """The command, with every failure turned into exit 2 and a one-line message: exit 1 means "no match" or
    "a known problem applies", so a crash must never exit 1."""
    try:
        return int(args.fn(args))
    except BrokenPipeError:
        return _reader_gone(term.unwrapped(sys.stdout))
    except (ErrbookError, OSError) as e:   # a missing or unreadable file, a full disk, not a checkout, bad input
        print(f"errbook: {e}", file=sys.stderr)
        return ExitCode.ERROR
    except KeyboardInterrupt:
        return ExitCode.INTERRUPTED
    except MemoryError:
        print("errbook: out of memory (a memory limit such as ulimit -v, or an input too big for it)", file=sys.stderr)
        return ExitCode.ERROR
    except Exception as e:
        if os.environ.get("ERRBOOK_DEBUG"):
            traceback.print_exc()
        print(f"errbook: internal error: {type(e).__name__}: {term.cut(str(e), 500)}"
              + ("" if os.environ.get("ERRBOOK_DEBUG") else " (ERRBOOK_DEBUG=1 shows the traceback)"), file=sys.stderr)
        return ExitCode.ERROR


def _complete(parser: argparse.ArgumentParser) -> None:
    """Answers the shell's TAB and exits, when the shell's completion code (--print-completion) is asking."""
    if os.environ.get("_ARGCOMPLETE"):
        import argcomplete
        argcomplete.autocomplete(parser)


if __name__ == "__main__":
    sys.exit(main())
