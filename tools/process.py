"""Process tuning for NumPy: one BLAS thread per computation, and glibc keeping freed memory (Linux only)."""

from __future__ import annotations

import ctypes
import functools

from threadpoolctl import threadpool_limits


def keep_freed_memory() -> None:
    """Ask glibc to keep freed blocks instead of returning them to the system (Linux only, else a no-op).

    A training step allocates and frees dozens of 1-4 MB arrays; by default each one is handed back and
    page-faulted in again next time, which doubles the step time on small models. The setting is for the
    whole process, so the entry points call it once (streamlit_app.py, tools/train.py, the benchmarks).
    """
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(-3, 32 << 20)  # M_MMAP_THRESHOLD: below 32 MB, allocate from the heap
        libc.mallopt(-1, 256 << 20)  # M_TRIM_THRESHOLD: keep up to 256 MB of free heap
    except (OSError, AttributeError):
        pass


@functools.cache
def one_blas_thread():
    """Once per process: one BLAS thread per computation. A server's sessions already run side by side on the
    cores; BLAS threads on top of them oversubscribe a small server (a training step ran ~3x slower)."""
    return threadpool_limits(1)
