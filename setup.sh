#!/usr/bin/env bash
# One-time (idempotent) setup: system packages, then the project into ./.venv.
# Safe to re-run: every step is skipped when already done.
set -euo pipefail
cd "$(dirname "$0")"

# System tools: bubblewrap isolates generated code (programs/sandbox/); a CJK TrueType font makes
# the synthetic Chinese filings look like real ones (reportlab's built-in CID font is the fallback);
# opencv, under the OCR engine (rapidocr-onnxruntime), loads libGL and glib.
# An ordinary user (no root, no password-less sudo) never gets a prompt: what is missing is printed as
# the command an administrator runs, and the Python part goes on; without bubblewrap the sandbox then
# refuses to run generated code and names the same fix (README, "Running as an ordinary user").
need=()
for pkg in bubblewrap fonts-wqy-zenhei libgl1 libglib2.0-0; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
  install=(apt-get install -y -qq "${need[@]}")
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "setup: please install ${need[*]} with your package manager (no apt-get here)" >&2
  elif [ "$(id -u)" -eq 0 ]; then
    echo "setup: installing ${need[*]}" >&2
    apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive "${install[@]}" >/dev/null
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then  # -n: never a password prompt
    echo "setup: installing ${need[*]} (sudo)" >&2
    sudo -n apt-get update -qq >/dev/null && sudo -n env DEBIAN_FRONTEND=noninteractive "${install[@]}" >/dev/null
  else
    echo "setup: ${need[*]} not installed, and this user cannot install system packages. Ask an administrator to run:" >&2
    echo "    sudo apt-get update && sudo apt-get install -y ${need[*]}" >&2
    echo "setup: going on with the Python part." >&2
    case " ${need[*]} " in *" bubblewrap "*) echo "setup: until bubblewrap is installed, generated code is refused." >&2 ;; esac
  fi
fi
# bubblewrap run by an ordinary user needs unprivileged user namespaces: say so now, not at the first question.
if [ "$(id -u)" -ne 0 ] && command -v bwrap >/dev/null 2>&1 && ! bwrap --unshare-user --ro-bind / / true 2>/dev/null; then
  echo "setup: bubblewrap cannot create a user namespace for this user, so generated code will be refused." >&2
  echo "    Ask an administrator to enable them: sysctl -w kernel.unprivileged_userns_clone=1 (Debian)," >&2
  echo "    sysctl -w user.max_user_namespaces=15000, or on Ubuntu 23.10+" >&2
  echo "    sysctl -w kernel.apparmor_restrict_unprivileged_userns=0, persisted in /etc/sysctl.d/" >&2
fi

PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  if ! "$PY" -c 'import sys; assert sys.version_info >= (3, 11)' 2>/dev/null; then
    echo "setup: '$PY' is not a Python 3.11+ this user can run; name one, e.g. PYTHON=/usr/bin/python3 bash setup.sh" >&2
    exit 1
  fi
  if ! "$PY" -m venv .venv; then
    rm -rf .venv  # half made (no pip): the next run must not take it for a finished one
    echo "setup: '$PY' could not make a venv (Debian/Ubuntu: an administrator installs python3-venv)" >&2
    exit 1
  fi
fi
stamp=.venv/.collate-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  .venv/bin/python -m pip install -q --upgrade pip
  # torch is pinned in pyproject (the CPU wheel); the editable install brings everything else.
  .venv/bin/python -m pip install -q -e ".[dev]"
  touch "$stamp"
fi
# The one way every command in the README and every hint a command prints is written: `collate ...` in a
# shell where the venv is active (a new shell has to enter it again).
# On stdout: it is what to do next, not a problem (stderr carries only what needs an administrator).
if [ "${VIRTUAL_ENV:-}" != "$PWD/.venv" ]; then
  echo "setup: done. In this and every new shell, enter the project's venv first:"
  echo "    source $PWD/.venv/bin/activate     # then: collate --help, collate demo"
else
  echo "setup: done (the venv is active: collate --help lists the commands)"
fi
