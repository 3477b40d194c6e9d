"""Regenerating the published evaluation: Figure 12 (speedups of partial and full fusion over
unfused) and Figure 14 (their FLOPs and bytes normalized to unfused) over every application ×
data set × fusion configuration, with the published ratios beside ours.

    fuseflow reproduce fig12 --preset small          # JSON, markdown table and PNG per figure

:mod:`~fuseflow.reproduce.sweep` runs the points (worker processes, a resumable cache),
:mod:`~fuseflow.reproduce.figures` turns them into figures, and
:mod:`~fuseflow.reproduce.published` holds the published numbers.
"""

from fuseflow.reproduce.figures import FIGURES
from fuseflow.reproduce.sweep import Point, SweepSettings, run_sweep, sweep_points

__all__ = ["FIGURES", "Point", "SweepSettings", "run_sweep", "sweep_points"]
