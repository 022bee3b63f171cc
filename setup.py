"""The wheel carries a snapshot of the knowledge base (errata/ and mkdocs.yml) as package data, errbook/_snapshot/,
so an installed errbook triages with no clone (common/paths.py falls back to it). Copied at build time from the
checkout instead of moved into the package: errata/ stays where the site, the runbooks and the tests read it.
An editable install (`pip install -e .`, bootstrap.sh) copies nothing: it reads the checkout itself."""
from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
SNAPSHOT = ("errata", "mkdocs.yml")          # what a snapshot root holds: a checkout's triage/doctor/show inputs


class BuildWithSnapshot(build_py):
    def run(self):
        super().run()
        if getattr(self, "editable_mode", False) or not (HERE / "errata").is_dir():
            return
        dest = Path(self.build_lib) / "errbook" / "_snapshot"
        shutil.rmtree(dest, ignore_errors=True)
        dest.mkdir(parents=True)
        for name in SNAPSHOT:
            src = HERE / name
            if src.is_dir():
                shutil.copytree(src, dest / name, ignore=shutil.ignore_patterns(".*", "__pycache__"))
            else:
                shutil.copy2(src, dest / name)
        built = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        (dest / "SNAPSHOT.json").write_text(json.dumps({"built": built}) + "\n", encoding="utf-8")


setup(cmdclass={"build_py": BuildWithSnapshot})
