"""The one table of exit codes: what each number means, and what each subcommand returns (README's table)."""
from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0              # done; nothing found, nothing applies, all passed; or the reader closed our output (| head)
    FINDINGS = 1        # a result, not a failure: a match, findings, something applies or failed, something due
    ERROR = 2           # usage error, unreadable input, an error errbook could not recover from (never a finding)
    INTERRUPTED = 130   # Ctrl-C (128 + SIGINT); `errbook triage` killed by a signal exits 128 + its number


# What each subcommand's codes mean, as README and `--help` say them.
BY_COMMAND: dict[str, dict[ExitCode, str]] = {
    "triage": {ExitCode.OK: "a diagnosis: a line names a known problem",
               ExitCode.FINDINGS: "no diagnosis (likely entries and observations may still be listed)",
               ExitCode.ERROR: "error"},
    "find": {ExitCode.OK: "the short list, or the next question, was printed",
             ExitCode.FINDINGS: "no entry fits the answers",
             ExitCode.ERROR: "an unknown question or answer, an unreadable log or facts file",
             ExitCode.INTERRUPTED: "Ctrl-C at a question"},
    "show": {ExitCode.OK: "shown", ExitCode.ERROR: "no entry has that id or alias"},
    "search": {ExitCode.OK: "found", ExitCode.FINDINGS: "nothing found", ExitCode.ERROR: "usage error"},
    "doctor": {ExitCode.OK: "nothing applies", ExitCode.FINDINGS: "something applies", ExitCode.ERROR: "error"},
    "mcp": {ExitCode.OK: "the client closed the connection", ExitCode.ERROR: "the mcp package is not installed"},
    "validate": {ExitCode.OK: "ok", ExitCode.FINDINGS: "findings", ExitCode.ERROR: "usage"},
    "new": {ExitCode.OK: "created", ExitCode.ERROR: "not created"},
    "run": {ExitCode.OK: "all passed (--dry-run: none would run)",
            ExitCode.FINDINGS: "any failed (--dry-run: some would run)",
            ExitCode.ERROR: "usage error or unsaved records",
            ExitCode.INTERRUPTED: "--slurm: stopped waiting (the jobs keep running)"},
    "ledger": {ExitCode.OK: "no bad lines", ExitCode.FINDINGS: "bad lines",
               ExitCode.ERROR: "--merge: a spool that cannot be merged, or problems"},
    "stale": {ExitCode.OK: "none due", ExitCode.FINDINGS: "some due", ExitCode.ERROR: "error"},
    "eval": {ExitCode.OK: "figures printed", ExitCode.ERROR: "a label cannot be read"},
    "platform": {ExitCode.OK: "printed"},
    "serve": {ExitCode.OK: "stopped (Ctrl-C, SIGTERM)", ExitCode.ERROR: "the port is taken, or mkdocs serve failed"},
    "build": {ExitCode.OK: "built", ExitCode.FINDINGS: "mkdocs build --strict failed"},
}
