"""What the bench scripts share (they run as ``python bench/<script>.py``, so this folder is on
``sys.path``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def write_json(path: Path, doc: Any) -> None:
    """Writes ``doc`` as indented JSON to ``path`` (its folder made if needed) and says so."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=2) + "\n")
    print(f"wrote {path}")
