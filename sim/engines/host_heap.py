"""The host process's heap: the policy that keeps freed memory for reuse, and the memory the
fast engine may still allocate.

The fast engine allocates and frees many large arrays (a block's output streams, chunk after
chunk). glibc's default returns every freed block above its mmap threshold (at most 32 MB) to
the kernel, so the next block's arrays fault their pages in again: the kernel zeroes each page,
which costs as much as a fifth of a long simulation (measured in ``docs/timing.md``).
:func:`keep_freed_memory` switches the process to large blocks from the heap and freed memory
kept for reuse. It is a process-wide policy, so the library never sets it by itself: the
``fuseflow`` command sets it for its own process (and the worker processes it forks), and a
program embedding FuseFlow may call it.

A process that keeps its freed memory holds it resident; the system no longer counts it as
available, but the process can reuse it. :func:`available_bytes` therefore adds the heap's free
bytes to the system's available memory, so the engine's memory checks see what the process can
really allocate.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import resource

M_TRIM_THRESHOLD = -1
M_MMAP_MAX = -4
"""``mallopt`` parameters (glibc's ``malloc.h``)."""

KEEP_UP_TO = 2**31 - 1
"""The trim threshold under :func:`keep_freed_memory` (the largest ``mallopt`` takes): free
memory at the top of the heap goes back to the kernel only beyond 2 GiB."""


class _MallInfo2(ctypes.Structure):
    """glibc's ``struct mallinfo2`` (glibc 2.33 and later)."""

    _fields_ = [(name, ctypes.c_size_t) for name in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks",
                 "uordblks", "fordblks", "keepcost")]


def _libc():
    """The C library if it is glibc with ``mallopt`` and ``mallinfo2``, else None."""
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        libc = ctypes.CDLL(name)
        libc.mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
        libc.mallopt.restype = ctypes.c_int
        libc.mallinfo2.restype = _MallInfo2
    except (OSError, AttributeError):
        return None
    return libc


_LIBC = _libc()


def keep_freed_memory() -> bool:
    """Makes this process (and the processes it forks afterwards) take large blocks from the
    heap instead of fresh mappings, and keep freed memory for reuse instead of returning it to
    the kernel. Returns whether the policy is in force (False where the C library is not glibc).
    """
    if _LIBC is None:
        return False
    return bool(_LIBC.mallopt(M_MMAP_MAX, 0)) and bool(_LIBC.mallopt(M_TRIM_THRESHOLD,
                                                                      KEEP_UP_TO))


def free_heap_bytes() -> int:
    """Bytes the heap holds free for reuse (0 where the C library does not report them)."""
    if _LIBC is None:
        return 0
    return int(_LIBC.mallinfo2().fordblks)


def available_bytes() -> int | None:
    """Memory this process may still allocate: the system's available memory plus the free
    bytes its heap keeps, capped by the address-space limit (None where neither is known)."""
    limits = []
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    limits.append(int(line.split()[1]) * 1024 + free_heap_bytes())
        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
        if soft != resource.RLIM_INFINITY:
            with open("/proc/self/statm") as f:
                limits.append(soft - int(f.read().split()[0]) * resource.getpagesize())
    except (OSError, ValueError):
        pass
    return min(limits) if limits else None
