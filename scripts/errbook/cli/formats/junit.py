"""--format junit: JUnit XML (the dialect of junit-10.xsd, which Jenkins, GitLab, Azure and pytest read), one
testcase per answer, classname errbook.<class>, name "<id> <title>" (the XSD allows no other testcase attribute,
so the entry's page URL and the source position are in the text):

- a diagnosis: <failure type="diagnosis" message="<id>: <title>"> with the cause, first fix step, page URL and the
  matched log lines;
- a likely answer: a failure too (it may be the cause), type="likely", its message starting "likely:";
- an observation: a passing testcase, the same text in <system-out> (worth knowing, not a failure of anything);
- no answer: one skipped testcase "no known entry" with the first failure line (nothing was classified).

Text that XML 1.0 cannot hold (ANSI escapes, other control characters) is dropped."""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from errbook.cli.formats import base

_NOT_XML = re.compile("[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_text(s: str) -> str:
    return _NOT_XML.sub("", s)


def _details(r: dict, ctx: base.Context) -> str:
    lines = [base.plain_message(r, ctx)]
    pos = base.primary(r, ctx).get("source")
    if pos:
        lines.append(f"Source: {pos['path']}:{pos['line']}")
    for sig, ln in base.evidence(r):
        lines.append(f"{base.log_name(ctx, ln)}:{ln['line']} [{sig}]: {base.cap(ln['text'], base.LINE_CAP)}")
    return xml_text("\n".join(lines))


def testcase(r: dict, ctx: base.Context) -> ET.Element:
    case = ET.Element("testcase", {"classname": f"errbook.{r.get('class', 'entry')}",
                                   "name": xml_text(base.cap(base.headline(r), 200))})
    lvl = base.level_of(r)
    if base.SEVERITY[lvl]["junit"] == "failure":
        prefix = "likely: " if lvl == "likely" else ""
        fail = ET.SubElement(case, "failure", {"type": lvl,
                                               "message": xml_text(f"{prefix}{r['id']}: {base.cap(r['title'], 200)}")})
        fail.text = _details(r, ctx)
    else:
        ET.SubElement(case, "system-out").text = _details(r, ctx)
    return case


def render(results: list[dict], stats: dict, ctx: base.Context) -> str:
    cases = [testcase(r, ctx) for r in results]
    failures = sum(1 for c in cases if c.find("failure") is not None)
    skipped = 0
    if not cases:
        none = ET.Element("testcase", {"classname": "errbook", "name": "no known entry"})
        first = stats.get("first_failure_line")
        ET.SubElement(none, "skipped", {"message": "no entry of the errbook notebook explains this log"}).text = \
            xml_text(f"first failure line: {base.cap(first, base.LINE_CAP)}" if first else "no line reports a failure")
        cases, skipped = [none], 1
    name = "errbook triage: " + ", ".join("stdin" if x == "-" else x for x in ctx.logs)
    suite = ET.Element("testsuite", {"name": xml_text(base.cap(name, 200)), "tests": str(len(cases)),
                                     "failures": str(failures), "errors": "0", "skipped": str(skipped)})
    props = ET.SubElement(suite, "properties")
    for k, v in (("errbook_version", ctx.version), ("site_url", ctx.site_url or ""),
                 ("lines_read", str(stats.get("lines", 0)))):
        ET.SubElement(props, "property", {"name": k, "value": v})
    suite.extend(cases)
    root = ET.Element("testsuites", {"name": "errbook", "tests": str(len(cases)), "failures": str(failures),
                                     "errors": "0"})
    root.append(suite)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
