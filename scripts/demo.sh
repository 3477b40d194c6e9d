#!/usr/bin/env bash
# The main job: set up, then compile a 2-layer GCN on the Cora graph from PyTorch in each
# fusion configuration (unfused, partial, full), simulate it (fast engine), check it against
# PyTorch, print cycles and speedups, and write a report (results.json, cycles.png and the
# graph views) to reports/gcn-cora/. Extra arguments go to `fuseflow run` (e.g.
# `--engine reference`, `--report DIR`, `--arch fifo_depth=16`).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/fuseflow run gcn --dataset cora --preset published --report reports/gcn-cora "$@"
