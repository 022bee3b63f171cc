"""The formats' Context from the checkout and the environment: the site's root URL and URL style from
mkdocs.yml, the CI checkout (a source path under it is written relative to it), the unexplained failure lines."""
from __future__ import annotations

import os
from pathlib import Path

import yaml

from errbook import __version__
from errbook.cli.formats import base, loglines

# The CI checkout, by the variable each CI sets (GitHub Actions, GitLab CI, Jenkins and most others)
WORKSPACE_VARS = ("GITHUB_WORKSPACE", "CI_PROJECT_DIR", "WORKSPACE")


class _ConfigLoader(yaml.SafeLoader):
    """mkdocs.yml as MkDocs reads it, as far as the formats need: !ENV resolved, other tags (!!python/name of
    the emoji extension) read as null."""


def _env_tag(loader: yaml.SafeLoader, node: yaml.Node):
    """MkDocs' !ENV (pyyaml_env_tag): !ENV NAME, or !ENV [NAME, ..., default]: the first variable set, else the
    default (the last item of a list of two or more)."""
    if isinstance(node, yaml.ScalarNode):
        names, default = [loader.construct_scalar(node)], None
    else:
        items = [loader.construct_object(n) for n in node.value]
        names, default = (items[:-1], items[-1]) if len(items) > 1 else (items, None)
    for name in names:
        if name in os.environ:
            return yaml.safe_load(os.environ[name]) if os.environ[name] else ""
    return default


_ConfigLoader.add_constructor("!ENV", _env_tag)
_ConfigLoader.add_multi_constructor("", lambda loader, suffix, node: None)


def site_config(root: Path) -> tuple[str | None, bool]:
    """(site_url or None, use_directory_urls) of the checkout's mkdocs.yml; (None, True) when it has none."""
    try:
        conf = yaml.load((root / "mkdocs.yml").read_text(encoding="utf-8"), Loader=_ConfigLoader)  # noqa: S506
    except (OSError, yaml.YAMLError):
        return None, True
    conf = conf if isinstance(conf, dict) else {}
    url = conf.get("site_url")
    return (str(url) if url else None), conf.get("use_directory_urls", True) is not False


def make(root: Path, logs: list[str], read_from: list[str], results: list[dict], site_url: str | None,
         unexplained: bool) -> base.Context:
    """logs: the files as given ("-": standard input); read_from: the files triage read (stdin spooled to one).
    site_url: --site-url ("" for relative addresses), None for mkdocs.yml's."""
    conf_url, directory_urls = site_config(root)
    url = conf_url if site_url is None else (site_url or None)
    workspace = next((os.environ[v] for v in WORKSPACE_VARS if os.environ.get(v)), "")
    lines: list[dict] = []
    if unexplained:
        multi = len(logs) > 1
        sources = [(path, ("stdin" if name == "-" else name) if multi else "")
                   for name, path in zip(logs, read_from, strict=True) if path != "-"]
        lines = loglines.unexplained(sources, base.explained_lines(results))
    return base.Context(site_url=url, directory_urls=directory_urls, logs=tuple(logs), workspace=workspace,
                        unexplained=tuple(lines), version=__version__)
