#!/usr/bin/env bash
# The main job: set up, then compile every kernel from PyTorch, simulate it and check it.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/fuseflow run all --sparsity 0.9 --scale 4 "$@"
