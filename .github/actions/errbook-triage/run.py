"""The errbook-triage action's step: `errbook triage --format github` on the given logs.

Reads its inputs from INPUT_* variables (action.yml). Prints the workflow commands (the runner turns them into
annotations), lets errbook append the Markdown summary to $GITHUB_STEP_SUMMARY, writes the outputs level, entries
and exit-code to $GITHUB_OUTPUT, and exits 0, or 1 when fail-on asks for it, or 2 when triage could not run (a
log that matches nothing included).
"""
from __future__ import annotations

import glob
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
FAIL_ON = ("diagnosis", "likely", "observation", "never")


def logs_of(spec: str) -> list[str]:
    """One path or glob pattern a line; a pattern that matches nothing is kept as it is (errbook reports it)."""
    out: list[str] = []
    for pat in (line.strip() for line in spec.splitlines()):
        if pat:
            out += sorted(glob.glob(pat, recursive=True)) or [pat]
    return out


def annotations(stdout: str, severity: dict) -> list[tuple[str, str]]:
    """(level, entry id) of each answer's workflow command, in rank order."""
    level_of = {row["github"]: level for level, row in severity.items()}
    out = []
    for line in stdout.splitlines():
        if not line.startswith("::"):
            continue
        kind, _, rest = line[2:].partition(" ")
        props = rest.split("::", 1)[0]
        title = next((p[len("title="):] for p in props.split(",") if p.startswith("title=")), "")
        eid = title.split(" ", 1)[0]
        if kind in level_of and eid.startswith("RMN-"):
            out.append((level_of[kind], eid))
    return out


def set_outputs(values: dict) -> None:
    path = os.environ.get("GITHUB_OUTPUT")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.writelines(f"{k}={v}\n" for k, v in values.items())


def main() -> int:
    root = Path(os.environ.get("INPUT_ERRBOOK_ROOT") or HERE.parents[2]).resolve()
    fail_on = (os.environ.get("INPUT_FAIL_ON") or "never").strip()
    if fail_on not in FAIL_ON:
        print(f"::error title=errbook triage::fail-on must be one of {', '.join(FAIL_ON)}, not {fail_on!r}")
        return 2
    logs = logs_of(os.environ.get("INPUT_LOGS", ""))
    if not logs:
        print("::error title=errbook triage::no log given (input logs)")
        return 2
    sys.path.insert(0, str(root / "scripts"))
    from errbook.cli.formats.base import LEVELS, SEVERITY  # the checkout's own table of levels

    cmd = [sys.executable, "-m", "errbook", "--root", str(root), "triage", "--format", "github",
           "--top", os.environ.get("INPUT_TOP") or "3"]
    if os.environ.get("INPUT_SITE_URL"):
        cmd += ["--site-url", os.environ["INPUT_SITE_URL"]]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(root / "scripts"),
                                                                       os.environ.get("PYTHONPATH")])))
    r = subprocess.run(cmd + ["--", *logs], stdout=subprocess.PIPE, text=True, env=env)
    sys.stdout.write(r.stdout)
    found = annotations(r.stdout, SEVERITY)
    set_outputs({"level": found[0][0] if found else "none", "entries": ",".join(e for _, e in found),
                 "exit-code": r.returncode})
    if r.returncode == 2:
        print("::error title=errbook triage::triage could not run (see the messages above)")
        return 2
    if fail_on != "never" and any(LEVELS.index(lv) <= LEVELS.index(fail_on) for lv, _ in found):
        print(f"errbook: an answer at level {fail_on} or stronger was found (fail-on: {fail_on})", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
