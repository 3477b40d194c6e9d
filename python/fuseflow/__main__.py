"""``python -m fuseflow``: the ``fuseflow`` command."""

import sys

from fuseflow.tools.cli import main

sys.exit(main())
