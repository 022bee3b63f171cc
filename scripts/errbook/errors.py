"""The one error hierarchy: every error errbook raises for a reason a person can act on derives from ErrbookError.

The CLI turns an ErrbookError that no command handled into one line on stderr and exit 2 (cli/exitcodes.py), never
a traceback and never exit 1, which means "no match" or "a known problem applies". Each error keeps the builtin
base its callers catch (ValueError, OSError, ...), so code that catches those still does.

    ErrbookError
      NotACheckout (common.paths)      --root / $ERRBOOK_ROOT is not a checkout
      Refused (common.regfile)         a file that must not be read: not regular, a symlink, too large
      LoadError-like parse errors:     YamlError (kb.yamlpos), RangeError (kb.versions), SubsetError
                                       (kb.regexsubset), ParameterError (kb.parameters), ScaffoldError (kb.scaffold)
      LabelError (triage.evaluate)     a labelled log's metadata cannot be read
      WorkerDied, SpillFailed (triage.parallel)
      FactsError (machine.facts)       a facts file that cannot be used
      CheckError (machine.checks)      an entry's machine check that cannot be evaluated
      LedgerWriteError (runbooks.ledger), FleetError, SpoolError (runbooks.slurm / spool)
"""
from __future__ import annotations


class ErrbookError(Exception):
    """An error with a message for the user (str(error)); the CLI exits 2 with it when no command handled it."""
