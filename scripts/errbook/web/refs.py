"""Links between pages and to the source: the repository's blob links, a link to an entry from any page, and
the [[RMN-0001]] / [[repo]] references of hand-written pages."""
from __future__ import annotations

import re
from dataclasses import dataclass

from errbook.web import addresses
from errbook.web.escape import link


@dataclass(frozen=True)
class Links:
    """Where the source lives, for 'edit this page' and runbook links (from mkdocs.yml's repo_url)."""
    repo_url: str = ""
    branch: str = "main"

    def blob(self, path: str) -> str:
        return f"{self.repo_url.rstrip('/')}/blob/{self.branch}/{path}" if self.repo_url else ""


def rel_entry_link(eid: str, title: str, from_dir: str) -> str:
    depth = from_dir.count("/") + 1 if from_dir else 0
    return link(f"{eid} · {title}", "../" * depth + addresses.entry_src(eid))


def expand_refs(markdown: str, by_id: dict, page_dir: str, links: Links = Links()) -> tuple[str, list[str]]:
    """[[RMN-0001]] in hand-written pages becomes a link with the entry's title, [[repo]] a link to the
    repository; unknown ids are reported. Code (fenced blocks and `spans`) is left as written, so pages can
    show the syntax itself."""
    unknown: list[str] = []

    def sub(m):
        if m.group(0) == "[[repo]]":
            return link(links.repo_url, links.repo_url) if links.repo_url else "the project's repository"
        eid = m.group(1)
        if eid not in by_id:
            unknown.append(eid)
            return m.group(0)
        return rel_entry_link(eid, by_id[eid]["title"], page_dir)

    out, in_fence = [], None
    for line in markdown.split("\n"):
        f = re.match(r"^\s*(`{3,}|~{3,})", line)
        if in_fence:
            if f and f.group(1)[0] == in_fence[0] and len(f.group(1)) >= len(in_fence):
                in_fence = None
            out.append(line)
            continue
        if f:
            in_fence = f.group(1)
            out.append(line)
            continue
        parts = re.split(r"(`+[^`]*`+)", line)
        out.append("".join(p if p.startswith("`") else re.sub(r"\[\[(RMN-\d{4})\]\]|\[\[repo\]\]", sub, p)
                           for p in parts))
    return "\n".join(out), unknown
