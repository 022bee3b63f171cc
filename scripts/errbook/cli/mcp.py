"""`errbook mcp`: the book as a Model Context Protocol server over stdio, for editors and coding assistants.

The SDK (`pip install 'errbook[mcp]'`) is imported only here, when the command runs (cli/mcpserver.py): without it
the rest of errbook works and this command says what to install, exit 2. Tools: triage, show, search, doctor
(cli/mcptools.py); the guided finder's `find` comes when the finder exists.
"""
from __future__ import annotations

import argparse
import sys

from errbook.cli.common import root_of
from errbook.cli.exitcodes import ExitCode

MISSING_SDK = ("errbook mcp: the Model Context Protocol SDK is not installed: pip install 'errbook[mcp]' "
               "(or pip install mcp)")
ON_A_TERMINAL = ("errbook mcp: serving MCP on standard input and output; an MCP client starts this command "
                 "(see docs/assistant.md). Ctrl-C stops it.")


def add_parser(sub) -> None:
    s = sub.add_parser("mcp", help="serve the book to editors and coding assistants (Model Context Protocol, stdio)",
                       description="Speaks the Model Context Protocol on standard input and output, for an editor "
                                   "or a coding assistant that starts it (its MCP configuration: command errbook, "
                                   "args [\"mcp\"]). Tools: triage (a log's text -> ranked answers with their "
                                   "level, cause, first fix and page), show (an entry, fix first), search (as the "
                                   "site's search box), doctor (a facts document's known problems). Every answer "
                                   "names its entry id and page URL. Stdio only: nothing leaves the machine, and "
                                   "no file is read but the checkout's. Needs the mcp package "
                                   "(pip install 'errbook[mcp]'). Exit 0 when the client closes the connection, "
                                   "2 when the SDK is missing.")
    s.add_argument("--site-url", metavar="URL", default=None,
                   help="the site's root URL for entry pages (default: mkdocs.yml's site_url, i.e. "
                        "$ERRBOOK_SITE_URL; '' for addresses relative to the site root)")
    s.set_defaults(fn=run)


def run(args: argparse.Namespace) -> int:
    from errbook.cli.mcptools import Tools
    root = root_of(args)
    try:
        from errbook.cli import mcpserver
    except ImportError as e:
        if (e.name or "").split(".")[0] not in ("mcp", "mcp_types", "pydantic"):
            raise
        print(MISSING_SDK, file=sys.stderr)
        return ExitCode.ERROR
    if sys.stdin is not None and sys.stdin.isatty():
        print(ON_A_TERMINAL, file=sys.stderr)
    mcpserver.build(Tools(root, args.site_url)).run("stdio")
    return ExitCode.OK
