#!/usr/bin/env bash
# The test command: set up, then run every lit test and every pytest suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export PATH="$PWD/.venv/bin:$PATH"
lit -sv test
pytest -q -p no:cacheprovider test
