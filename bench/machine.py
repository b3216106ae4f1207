"""How busy the machine was while a benchmark ran, apart from the benchmark itself.

The same page has cost 26 ms a move in one quarter hour and 51 ms in the next on a shared 2-core machine
(docs/LOAD.md): a figure means little without knowing what else the CPUs were doing. The load average
cannot say, since it counts the benchmark's own server and client. This reads, over the run, the system's
CPU times (every core's busy time, and on Linux "steal": time the hypervisor gave this virtual machine's
cores to someone else) and the CPU of this process and every process it started (the servers, HAProxy),
and prints what is left: the other work on the machine. psutil reads both on every platform.

    watch = Watch()
    ...  # the measurement
    print(watch.line())   # "machine during this run: ... other work 3% of a core, stolen by the host 0%"

What a platform does not report, the line leaves out and says so: steal is counted only by Linux; a process
that ended during the run counts through its parent (POSIX adds a reaped child's CPU to the parent's
account), which Windows does not keep, and which macOS does not let another process read: such a
process's CPU then shows as other work.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
from dataclasses import dataclass

import psutil

# psutil.cpu_times() fields that are not work: idle time, steal, guest time (Linux counts it inside user and
# nice already) and Windows' interrupt and dpc time (inside system already).
NOT_BUSY = ("idle", "iowait", "steal", "guest", "guest_nice", "interrupt", "dpc")


@dataclass(frozen=True)
class Snapshot:
    """CPU seconds since boot, summed over the cores (psutil converts the kernel's clock ticks)."""

    busy: float  # every core's time on work (user, nice, system, irq, softirq)
    steal: float | None  # the hypervisor ran something else while a core of this machine waited (Linux only)
    total: float  # every core's time, idle included
    own: float  # this process and every process it started, living or reaped


def _own_seconds() -> float:
    """CPU seconds of this process and its descendants: the living ones from their own accounts, the ones
    that ended through their parents' children_user / children_system (a reaped child's time is added there;
    for another process psutil reads it on Linux only)."""
    me = os.times()  # this process and the children it reaped (Windows reports no children's time: 0)
    total = me.user + me.system + me.children_user + me.children_system
    for child in psutil.Process().children(recursive=True):
        with contextlib.suppress(psutil.Error):  # ended while we looked
            t = child.cpu_times()
            total += t.user + t.system + t.children_user + t.children_system
    return total


def snapshot() -> Snapshot | None:
    """None where the system's CPU times cannot be read."""
    try:
        cpu = psutil.cpu_times()._asdict()
    except (OSError, psutil.Error):
        return None
    busy = sum(seconds for name, seconds in cpu.items() if name not in NOT_BUSY)
    steal = cpu.get("steal")
    total = busy + cpu["idle"] + cpu.get("iowait", 0.0) + (steal or 0.0)
    return Snapshot(busy=busy, steal=steal, total=total, own=_own_seconds())


class Watch:
    """Started at construction; line() describes the machine from then until now."""

    def __init__(self) -> None:
        self.start = snapshot()

    def shares(self) -> dict[str, float] | None:
        """Each as a fraction of one core over the run: busy (all work), own (this run's processes),
        other (busy minus own), steal (None where the platform does not count it). None where the system's
        CPU times cannot be read."""
        end = snapshot()
        if self.start is None or end is None or end.total <= self.start.total:
            return None
        cores = os.cpu_count() or 1
        per_core = (end.total - self.start.total) / cores  # seconds of wall time
        busy, own = end.busy - self.start.busy, end.own - self.start.own
        steal = None if end.steal is None or self.start.steal is None else (end.steal - self.start.steal) / per_core
        return {"busy": busy / per_core, "own": own / per_core, "other": max(busy - own, 0) / per_core,
                "steal": steal, "cores": cores}

    def line(self) -> str:
        s = self.shares()
        if s is None:
            return "machine during this run: unknown (the system's CPU times cannot be read here)"
        steal = "not counted here (Linux only)" if s["steal"] is None else f"{100 * s['steal']:.0f}%"
        return (f"machine during this run: {s['cores']} cores busy {100 * s['busy']:.0f}% of a core in all, this "
                f"run's processes {100 * s['own']:.0f}%, other work {100 * s['other']:.0f}%, stolen by the host "
                f"{steal}")


def event_loop() -> str:
    """The event loop a Streamlit server started by this Python runs on: Streamlit takes uvloop when it can
    import it (not on Windows), asyncio's own loop otherwise."""
    return "uvloop" if os.name != "nt" and importlib.util.find_spec("uvloop") else "asyncio"
