#!/usr/bin/env bash
# Creates .venv (if missing) and installs FuseFlow with its test tools. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
# The exact versions tested; pyproject.toml states ranges. torch is pinned to the CPU wheel
# (a looser pin pulls a multi-GB CUDA build).
.venv/bin/pip install --quiet --disable-pip-version-check torch==2.13.0 torch-mlir==20261001
.venv/bin/pip install --quiet --disable-pip-version-check -e '.[test]'
