"""The `errbook` command: one module per subcommand (each an add_parser and a run), app.py (the parser, the
terminal wrapper and the failure policy) and exitcodes.py (the one table of exit codes). Only this package sees
argparse: each subcommand translates its Namespace into typed calls of the domain modules."""
from errbook.cli.app import main

__all__ = ["main"]
