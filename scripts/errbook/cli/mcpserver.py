"""`errbook mcp`'s server: cli/mcptools.py's answers as Model Context Protocol tools, with the official SDK (`mcp`).

Imported only by cli/mcp.py once the command runs, so the rest of errbook needs no SDK. Stdio only: the server
opens no socket, and the tools read the checkout and the text the client sends, never a path it names.
(No `from __future__ import annotations`: the SDK reads the parameters' descriptions from their annotations.)
"""
from collections.abc import Callable
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from errbook import __version__
from errbook.cli.mcptools import TOP_MAX, Tools
from errbook.errors import ErrbookError

INSTRUCTIONS = """\
errbook is a team's notebook of ROCm migration errors: entries (RMN-NNNN), each with a cause, fix steps and a
runbook that verifies the fix. Give `triage` the text of a failing build or run log; read an answer with `show`.
When triage names nothing (a symptom, a timing table), `find` asks up to three questions and lists the entries that fit.
Cite every answer by its entry id and page URL. A triage answer's level says how far to trust it: diagnosis (a
message names the problem), observation (a condition worth knowing, not the cause) or likely (by similarity
only). Everything is answered on this machine; nothing is sent anywhere."""

# Every tool only reads (the checkout, and the text it is given) and reaches nothing outside this machine.
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)

Top = Annotated[int, Field(ge=1, le=TOP_MAX, description=f"how many entries to return, 1 to {TOP_MAX}")]


def _answering(fn: Callable[..., dict]) -> Callable[..., dict]:
    """fn with a failure the client can act on (an unknown entry, a facts document that is not one, an unreadable
    checkout) sent as the tool's error text; the SDK would otherwise send only "Error executing tool"."""
    def call(*args: Any, **kwargs: Any) -> dict:
        try:
            return fn(*args, **kwargs)
        except (ErrbookError, OSError) as e:
            raise ToolError(str(e)) from e
    return call


def build(tools: Tools) -> MCPServer:
    server = MCPServer("errbook", title="errbook: the ROCm migration error notebook", version=__version__,
                       instructions=INSTRUCTIONS, log_level="WARNING")

    @server.tool(annotations=READ_ONLY)
    def triage(log: Annotated[str, Field(description="the log's text: a build, test or run log, or its failing "
                                                     "part (not a file name)")],
               top: Top = 3,
               facts: Annotated[str | None, Field(description="optional: the JSON text of `errbook doctor "
                                                              "--collect` on the machine the log came from, to "
                                                              "re-rank by its facts")] = None) -> dict[str, Any]:
        """Which known problems explain a failing log, best first. Each answer: entry id, page url, level
        (diagnosis: a message names the problem; observation: worth knowing, not the cause; likely: by
        similarity only), cause, first fix, the log lines that matched, and the runbook command that verifies
        the fix. The verdict says what the first answer is worth."""
        return _answering(tools.triage)(log, top, facts)

    @server.tool(annotations=READ_ONLY)
    def show(entry: Annotated[str, Field(description="an entry id (RMN-0090) or an alias (hipErrorNoBinaryForGpu)")],
             lang: Annotated[Literal["en", "zh"], Field(description="language of the text")] = "en",
             ) -> dict[str, Any]:
        """One entry, fix first: `text` is the entry as `errbook show` prints it (cause, fix steps with their
        code, summary, symptoms, the error text it recognises, versions, references, verification), `entry` its
        data, with its id and page url."""
        return _answering(tools.show)(entry, lang)

    @server.tool(annotations=READ_ONLY)
    def search(query: Annotated[str, Field(description="words, an error message or a log line")],
               top: Top = 5) -> dict[str, Any]:
        """The entries the site's search box lists for these words (same index and rules), best first, each
        with its id, page url, title, class and the words that matched. For a whole log use triage."""
        return _answering(tools.search)(query, top)

    @server.tool(annotations=READ_ONLY)
    def find(answers: Annotated[dict[str, str] | None, Field(
                 description="the answers so far: question (component, happened, gpu) -> a choice's value, or "
                             "'unknown'; empty for the first question")] = None,
             log: Annotated[str | None, Field(description="optional: the log's text; orders the list by similarity "
                                                          "and may answer 'what happened' itself")] = None,
             facts: Annotated[str | None, Field(description="optional: the JSON text of `errbook doctor --collect`; "
                                                            "its GPU targets answer 'which GPU'")] = None,
             ) -> dict[str, Any]:
        """The guided finder for a log with no diagnostic line (triage found nothing, or only likely entries):
        stateless. Returns either `question` (the next of at most three: its facet, text and choices, each with
        how many entries it keeps; ask the user, then call again with the answer added to `answers`) or
        `results` (at most five entries, each with id, page url and `check`: the step that confirms it)."""
        return _answering(tools.find)(answers, log, facts)

    @server.tool(annotations=READ_ONLY)
    def doctor(facts: Annotated[str, Field(description="the JSON text of `errbook doctor --collect` (a facts "
                                                       "document) of the machine to check")]) -> dict[str, Any]:
        """Which known problems a machine is exposed to, from its facts: each with its evidence (the checks that
        hold, with the facts' values and where they were read), first fix, runbook command, id and page url;
        and the entries that could not be checked for want of a fact."""
        return _answering(tools.doctor)(facts)

    return server
