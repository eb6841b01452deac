#!/usr/bin/env bash
# One-time (idempotent) setup: system packages, then the project into ./.venv.
# Safe to re-run: every step is skipped when already done.
set -euo pipefail
cd "$(dirname "$0")"

# System tools: bubblewrap isolates generated code (programs/sandbox.py); a CJK TrueType font makes
# the synthetic Chinese filings look like real ones (reportlab's built-in CID font is the fallback);
# opencv, under the OCR engine (rapidocr-onnxruntime), loads libGL and glib.
need=()
for pkg in bubblewrap fonts-wqy-zenhei libgl1 libglib2.0-0; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  if command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing ${need[*]}" >&2
    $SUDO apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
  else
    echo "setup: please install ${need[*]} with your package manager (no apt-get here)" >&2
  fi
fi

PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
stamp=.venv/.collate-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  .venv/bin/python -m pip install -q --upgrade pip
  # torch is pinned in pyproject (the CPU wheel); the editable install brings everything else.
  .venv/bin/python -m pip install -q -e ".[dev]"
  touch "$stamp"
fi
