#!/bin/sh
# The .errbook-triage job's script (errbook-triage.yml): errbook triage on $ERRBOOK_LOGS, written as
# gl-code-quality-report.json (GitLab's Code Quality report) and errbook-triage.md (printed to the job log too).
# Exit 0, or 1 when $ERRBOOK_FAIL_ON asks for it, or 2 when triage could not run.
set -u
root="${ERRBOOK_ROOT:-.errbook}"
py="${ERRBOOK_PYTHON:-python3}"
report="${ERRBOOK_REPORT:-gl-code-quality-report.json}"
summary="${ERRBOOK_SUMMARY:-errbook-triage.md}"
fail_on="${ERRBOOK_FAIL_ON:-never}"
case "$fail_on" in diagnosis|likely|observation|never) ;; *)
    echo "errbook-triage: ERRBOOK_FAIL_ON must be diagnosis, likely, observation or never, not '$fail_on'" >&2
    exit 2 ;;
esac
if [ -z "${ERRBOOK_LOGS:-}" ]; then
    echo "errbook-triage: no log given (set ERRBOOK_LOGS)" >&2
    exit 2
fi
if [ "${ERRBOOK_INSTALL:-true}" = true ]; then
    "$py" -m pip install --quiet --disable-pip-version-check -r "$root/ci/triage-requirements.txt" || exit 2
fi
PYTHONPATH="$root/scripts${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONPATH
set --
for pattern in $ERRBOOK_LOGS; do set -- "$@" "$pattern"; done     # globs expand here
site=""
[ -n "${ERRBOOK_SITE_URL:-}" ] && site="--site-url=$ERRBOOK_SITE_URL"

"$py" -m errbook --root "$root" triage --format gitlab ${site:+"$site"} -- "$@" > "$report"
rc=$?
if [ "$rc" -eq 2 ]; then
    echo "errbook-triage: triage could not run (see above)" >&2
    echo "[]" > "$report"
    exit 2
fi
"$py" -m errbook --root "$root" triage --format markdown ${site:+"$site"} -- "$@" > "$summary"
cat "$summary"

# fail-on, by the checkout's own table of levels and their Code Quality severities
"$py" - "$report" "$fail_on" <<'PY'
import json
import sys

from errbook.cli.formats.base import LEVELS, SEVERITY

level_of = {row["gitlab"]: level for level, row in SEVERITY.items()}
found = {level_of[item["severity"]] for item in json.load(open(sys.argv[1], encoding="utf-8"))}
want = sys.argv[2]
if want != "never" and any(LEVELS.index(lv) <= LEVELS.index(want) for lv in found):
    print(f"errbook-triage: an answer at level {want} or stronger was found (ERRBOOK_FAIL_ON={want})", file=sys.stderr)
    sys.exit(1)
PY
