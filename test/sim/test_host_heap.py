"""The host heap policy: freed memory kept for reuse under ``keep_freed_memory`` (and by the
``fuseflow`` command), and counted as available to the fast engine.

Each case runs in a fresh interpreter: the policy is process-wide and cannot be undone."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from fuseflow.sim.engines import host_heap

pytestmark = pytest.mark.skipif(host_heap._LIBC is None, reason="needs glibc's mallopt")

BLOCK = 96 << 20
"""A block far above glibc's largest default mmap threshold (32 MB)."""

PROBE = f"""
import json, sys
import numpy as np
from fuseflow.sim.engines import host_heap
SETUP
before = host_heap.free_heap_bytes()
avail_before = host_heap.available_bytes()
a = np.ones({BLOCK} // 8)
del a
print(json.dumps({{"freed": host_heap.free_heap_bytes() - before,
                  "available_gain": host_heap.available_bytes() - avail_before}}))
"""


def _probe(setup: str) -> dict:
    out = subprocess.run([sys.executable, "-c", PROBE.replace("SETUP", setup)], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def test_default_policy_returns_large_blocks_to_the_kernel():
    assert _probe("pass")["freed"] < BLOCK // 2


def test_kept_memory_is_reusable_and_counted_as_available():
    kept = _probe("assert host_heap.keep_freed_memory()")
    assert kept["freed"] >= BLOCK * 9 // 10
    # The freed block is resident (not in MemAvailable) but counted: the estimate does not
    # drop by the block (other processes may move the system's figure a little).
    assert kept["available_gain"] > -BLOCK // 2


def test_the_fuseflow_command_keeps_freed_memory():
    setup = ("from fuseflow.tools.cli import main\n"
             "import contextlib, io\n"
             "with contextlib.redirect_stdout(io.StringIO()):\n"
             "    assert main(['list']) == 0")
    assert _probe(setup)["freed"] >= BLOCK * 9 // 10


def test_available_bytes_counts_the_free_heap(monkeypatch):
    system = host_heap.available_bytes()
    monkeypatch.setattr(host_heap, "free_heap_bytes", lambda: 1 << 40)
    assert host_heap.available_bytes() >= min(system + (1 << 40) - (1 << 30), 1 << 40) \
        or system is None
