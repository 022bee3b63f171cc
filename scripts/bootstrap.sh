#!/usr/bin/env bash
# One entry point for a fresh machine (README: "Set-up"):
#   bash scripts/bootstrap.sh serve   [mkdocs serve args]  the toolkit in .venv, then the site on http://127.0.0.1:8000
#   bash scripts/bootstrap.sh test    [--quick] [pytest args]  also what the tests use, then the tests
#   bash scripts/bootstrap.sh install [--quick]                 only install what `test` (or `test --quick`) needs
# Every mode puts `errbook` on PATH the same way: a small shim in ~/.local/bin (or $ERRBOOK_BIN_DIR) that runs
# this checkout's .venv/bin/errbook; the bootstrap prints the one line to add that folder to PATH if it is not there.
#
# --quick      the fast subset of the tests (pytest --quick: no Chromium, no Slurm, no toolchain tier, no slow
#              tests), and no Debian packages and no Triton installed for it
# Environment:
#   ERRBOOK_NO_APT=1      install no Debian packages (say which are missing; the tests that need them skip)
#   ERRBOOK_BIN_DIR=DIR   where the shim goes (default ~/.local/bin); ERRBOOK_BIN_DIR=none writes no shim
#   PYTHON=python3.12     the interpreter .venv is made from (default python3; 3.10 or newer)
#
# What the full `install`/`test` installs and changes on the machine is listed in README.md ("What the test
# command installs"). The Slurm and munge daemons are never started by the packages and never enabled at boot:
# the fleet tests (tests/slurmcluster.py) start their own in a temporary folder and stop them afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."
mode="${1:-test}"; shift || true
case "$mode" in
  serve|test|install) ;;
  *) echo "usage: bash scripts/bootstrap.sh serve|test|install [--quick] [args]" >&2; exit 2 ;;
esac
quick=0
if [ "$mode" != "serve" ]; then
  args=()
  for a in "$@"; do
    if [ "$a" = "--quick" ]; then quick=1; else args+=("$a"); fi
  done
  set -- ${args[@]+"${args[@]}"}
fi
[ "$mode" = "install" ] && [ $# -gt 0 ] && { echo "bootstrap: install takes only --quick (got: $*)" >&2; exit 2; }

SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
PY="${PYTHON:-python3}"
SBIN_PATH="$PATH:/usr/sbin:/sbin"
SLURM_SERVICES=(munge slurmctld slurmd)

# ------------------------------------------------------------------ Debian packages
need_apt=()
if ! "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; then
  echo "bootstrap: $PY is missing or older than 3.10; set PYTHON=python3.x" >&2; exit 2
fi
[ -x .venv/bin/python ] || "$PY" -c 'import ensurepip, venv' 2>/dev/null || need_apt+=(python3-venv)
if [ "$mode" != "serve" ] && [ "$quick" = 0 ]; then
  command -v hipcc        >/dev/null 2>&1 || need_apt+=(hipcc)            # the toolchain tier (HIP 5.2, clang 15)
  command -v chromium     >/dev/null 2>&1 || need_apt+=(chromium)         # the paste page and site tests
  command -v chromedriver >/dev/null 2>&1 || need_apt+=(chromium-driver)
  command -v node         >/dev/null 2>&1 || need_apt+=(nodejs)           # assets/engine.js against the Python engine
  command -v npm          >/dev/null 2>&1 || need_apt+=(npm)              # axe-core for the accessibility tests
  command -v rg           >/dev/null 2>&1 || need_apt+=(ripgrep)          # a reference tool of scripts/benchmark.py
  # tests/test_slurm.py starts a single-node Slurm (slurmctld + slurmd + munged) of its own on localhost
  PATH="$SBIN_PATH" command -v slurmctld >/dev/null 2>&1 || need_apt+=(slurmctld slurmd slurm-client)
  PATH="$SBIN_PATH" command -v munged    >/dev/null 2>&1 || need_apt+=(munge)
fi

apt_install() {
  # The packages' maintainer scripts would start munged, slurmctld and slurmd and enable them at boot. A
  # policy-rc.d that answers 101 ("action forbidden") stops invoke-rc.d and deb-systemd-invoke from starting
  # anything during this one apt-get run (unless the machine already has its own policy-rc.d, which then rules).
  local policy=/usr/sbin/policy-rc.d ours=0
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\n# errbook bootstrap: start no service while apt-get installs its packages\nexit 101\n' \
      | $SUDO tee "$policy" >/dev/null
    $SUDO chmod 755 "$policy"
    ours=1
    trap '$SUDO rm -f /usr/sbin/policy-rc.d' EXIT
  fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "$@"
  if [ "$ours" = 1 ]; then $SUDO rm -f "$policy"; trap - EXIT; fi
}

disable_at_boot() {
  # Packages enable their units on installation (deb-systemd-helper, update-rc.d); undo it, and stop any
  # that a running systemd started anyway. This touches only the services this run installed.
  local s
  for s in "$@"; do
    if command -v systemctl >/dev/null 2>&1; then
      $SUDO systemctl disable --quiet "$s.service" 2>/dev/null || true
      if [ -d /run/systemd/system ]; then $SUDO systemctl stop "$s.service" 2>/dev/null || true; fi
    fi
    if [ -x "/etc/init.d/$s" ] && command -v update-rc.d >/dev/null 2>&1; then
      $SUDO update-rc.d "$s" disable >/dev/null 2>&1 || true
    fi
  done
}

installed_services=()
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ -n "${ERRBOOK_NO_APT:-}" ]; then
    echo "bootstrap: ERRBOOK_NO_APT is set: not installing the Debian packages ${need_apt[*]} (the tests that need them skip)"
    if [[ " ${need_apt[*]} " == *" python3-venv "* ]]; then
      echo "bootstrap: $PY cannot make a virtual environment without python3-venv" >&2; exit 2
    fi
  else
    echo "bootstrap: installing Debian packages: ${need_apt[*]}"
    apt_install "${need_apt[@]}"
    for s in "${SLURM_SERVICES[@]}"; do
      case " ${need_apt[*]} " in *" $s "*) installed_services+=("$s") ;; esac
    done
    if [ ${#installed_services[@]} -gt 0 ]; then
      disable_at_boot "${installed_services[@]}"
      echo "bootstrap: ${installed_services[*]}: not started, not enabled at boot (the fleet tests start their own)"
    fi
  fi
fi
if [ "$mode" != "serve" ] && [ "$quick" = 0 ] && command -v systemctl >/dev/null 2>&1; then
  on=()                                     # installed before this run: say so, change nothing
  for s in "${SLURM_SERVICES[@]}"; do
    case " ${installed_services[*]} " in *" $s "*) continue ;; esac
    if [ "$(systemctl is-enabled "$s.service" 2>/dev/null)" = enabled ]; then on+=("$s"); fi
  done
  if [ ${#on[@]} -gt 0 ]; then
    echo "bootstrap: note: ${on[*]} are enabled at boot on this machine (an earlier bootstrap, or your own Slurm);" \
         "the tests do not need that. To undo it: sudo systemctl disable ${on[*]}"
  fi
fi

# ------------------------------------------------------------------ Python: .venv
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
extras=""                                   # serve: the toolkit only
if [ "$mode" != "serve" ]; then
  if [ "$quick" = 1 ]; then extras="test"; else extras="test,toolchain"; fi
fi
hash="$(sha1sum pyproject.toml | cut -c1-12)"
case "$extras" in                           # an install of a larger set serves a smaller one
  "")   enough=(base test "test,toolchain") ;;
  test) enough=(test "test,toolchain") ;;
  *)    enough=("$extras") ;;
esac
done_already=0
for e in "${enough[@]}"; do [ -f ".venv/.installed-$e-$hash" ] && done_already=1; done
if [ "$done_already" = 0 ]; then
  echo "bootstrap: installing errbook${extras:+ [$extras]} into .venv"
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -e ".${extras:+[$extras]}"
  touch ".venv/.installed-${extras:-base}-$hash"
fi

# ------------------------------------------------------------------ axe-core (the browser accessibility tests)
# Debian has no axe-core package: npm installs the version and integrity pinned in tests/axe/package-lock.json
# into tests/axe/node_modules (git-ignored), once per lock file. Without npm the accessibility tests skip outside
# CI and fail under it, as the Node twins do.
no_axe=0
if [ "$mode" != "serve" ] && [ "$quick" = 0 ]; then
  lock_hash="$(sha1sum tests/axe/package-lock.json | cut -c1-12)"
  if [ -f "tests/axe/node_modules/.installed-$lock_hash" ]; then :
  elif command -v npm >/dev/null 2>&1; then
    echo "bootstrap: installing axe-core into tests/axe/node_modules (npm ci, pinned by package-lock.json)"
    npm ci --prefix tests/axe --ignore-scripts --no-audit --no-fund --loglevel=error
    touch "tests/axe/node_modules/.installed-$lock_hash"
  else
    echo "bootstrap: npm is not installed: not installing axe-core (the accessibility tests skip)"
    no_axe=1
  fi
fi

# ------------------------------------------------------------------ errbook on PATH
install_shim() {
  local dir="${ERRBOOK_BIN_DIR:-}"
  if [ -z "$dir" ]; then
    [ -n "${HOME:-}" ] || { echo "bootstrap: HOME is unset: no errbook shim; use $PWD/.venv/bin/errbook"; return; }
    dir="$HOME/.local/bin"
  fi
  [ "$dir" = none ] && return
  local target="$PWD/.venv/bin/errbook" shim="$dir/errbook"
  if [ -e "$shim" ] && ! grep -q "errbook-bootstrap-shim" "$shim" 2>/dev/null; then
    echo "bootstrap: $shim exists and was not written by this bootstrap: left alone; use $target" >&2
    return
  fi
  mkdir -p "$dir"
  local q="'${target//\'/\'\\\'\'}'" tmp
  tmp="$(mktemp "$dir/.errbook.XXXXXX")"
  cat > "$tmp" <<EOF
#!/bin/sh
# errbook-bootstrap-shim: runs the errbook of one checkout; scripts/bootstrap.sh rewrites it on every run.
target=$q
if [ ! -x "\$target" ]; then
  echo "errbook: \$target is gone; run 'bash scripts/bootstrap.sh install' in your checkout again" >&2
  exit 127
fi
exec "\$target" "\$@"
EOF
  chmod 755 "$tmp"
  mv -f "$tmp" "$shim"
  echo "bootstrap: errbook -> $target (shim: $shim)"
  case ":$PATH:" in
    *":$dir:"*) ;;
    *) echo "bootstrap: $dir is not on your PATH: run this line, and add it to ~/.bashrc (or ~/.profile):"
       echo "    export PATH=\"$dir:\$PATH\"" ;;
  esac
}
install_shim
export NO_MKDOCS_2_WARNING=1

case "$mode" in
  serve)   exec .venv/bin/errbook serve "$@" ;;
  test)    if [ "$quick" = 1 ]; then set -- --quick "$@"; fi
           # Without Node.js the twin tests fail (tests/conftest.py): always under CI; a quick or ERRBOOK_NO_APT
           # run, which installs no Node, skips them instead.
           if ! command -v node >/dev/null 2>&1 && [ -z "${CI:-}" ] && { [ "$quick" = 1 ] || [ -n "${ERRBOOK_NO_APT:-}" ]; }
           then export ERRBOOK_ALLOW_NO_NODE=1; fi
           if [ "$no_axe" = 1 ] && [ -z "${CI:-}" ]; then export ERRBOOK_ALLOW_NO_AXE=1; fi
           exec .venv/bin/python -m pytest -n 2 "$@" ;;
  install) echo "bootstrap: installed into .venv${extras:+ (extras: $extras)}" ;;
esac
