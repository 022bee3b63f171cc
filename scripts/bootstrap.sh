#!/usr/bin/env bash
# One entry point for a fresh machine:  bash scripts/bootstrap.sh serve | test | install
#   serve   : install the Python toolkit into .venv and serve the site on http://127.0.0.1:8000
#   test    : also install the toolchains and browser the tests use (hipcc, Triton, Chromium), then run pytest
#   install : only install (what `test` needs)
set -euo pipefail
cd "$(dirname "$0")/.."
mode="${1:-test}"; shift || true

need_apt=()
if [ "$mode" != "serve" ]; then
  command -v hipcc    >/dev/null 2>&1 || need_apt+=(hipcc)
  command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
  command -v chromedriver >/dev/null 2>&1 || need_apt+=(chromium-driver)
  command -v node     >/dev/null 2>&1 || need_apt+=(nodejs)
  command -v rg       >/dev/null 2>&1 || need_apt+=(ripgrep)    # a reference tool of scripts/benchmark.py
  # tests/test_slurm.py starts a single-node Slurm (slurmctld + slurmd + munged) on localhost
  PATH="$PATH:/usr/sbin:/sbin" command -v slurmctld >/dev/null 2>&1 || need_apt+=(slurm-wlm)
  PATH="$PATH:/usr/sbin:/sbin" command -v munged    >/dev/null 2>&1 || need_apt+=(munge)
fi
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "bootstrap: installing Debian packages: ${need_apt[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need_apt[@]}"
fi

PY="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
extras="test,toolchain"; [ "$mode" = "serve" ] && extras=""
stamp=".venv/.installed-${extras:-base}-$(sha1sum pyproject.toml | cut -c1-12)"
if [ ! -f "$stamp" ]; then
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -e ".${extras:+[$extras]}"
  touch "$stamp"
fi
export NO_MKDOCS_2_WARNING=1

case "$mode" in
  serve)   exec .venv/bin/errbook serve "$@" ;;
  test)    exec .venv/bin/python -m pytest -n 2 "$@" ;;
  install) echo "bootstrap: installed into .venv" ;;
  *) echo "usage: bash scripts/bootstrap.sh serve|test|install" >&2; exit 2 ;;
esac
