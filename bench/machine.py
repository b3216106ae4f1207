"""How busy the machine was while a benchmark ran, apart from the benchmark itself.

The same page has cost 26 ms a move in one quarter hour and 51 ms in the next on a shared 2-core machine
(docs/LOAD.md): a figure means little without knowing what else the CPUs were doing. The load average
cannot say, since it counts the benchmark's own server and client. This reads, over the run, Linux's
/proc/stat (every core's busy time, and "steal": time the hypervisor gave this virtual machine's cores to
someone else) and the CPU of this process and every process it started (the servers, HAProxy), and prints
what is left: the other work on the machine.

    watch = Watch()
    ...  # the measurement
    print(watch.line())   # "machine during this run: ... other work 3% of a core, stolen by the host 0%"

Only Linux has /proc; elsewhere the line says so.
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path

PROC = Path("/proc")


@dataclass(frozen=True)
class Snapshot:
    busy: int  # ticks every core spent on work (user, nice, system, irq, softirq)
    steal: int  # ticks the hypervisor ran something else while a core of this machine waited
    total: int  # every tick of every core, idle included
    own: int  # ticks of this process and every process it started, living or reaped


def stat_fields(pid: int) -> list[str]:
    """The fields of /proc/PID/stat after the command name (which sits in parentheses and may hold spaces):
    [1] is the parent's pid, [11:15] utime, stime, cutime, cstime in clock ticks."""
    return (PROC / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()


def _own_ticks() -> int:
    """CPU ticks of this process and its descendants: the living ones from their own /proc entries, the
    ones that ended through their parents' cutime / cstime (a reaped child's time is added there)."""
    stats = {}
    for entry in PROC.iterdir():
        if entry.name.isdigit():
            try:
                stats[int(entry.name)] = stat_fields(int(entry.name))
            except (OSError, IndexError):
                continue  # ended while we looked
    children: dict[int, list[int]] = {}
    for pid, fields in stats.items():
        children.setdefault(int(fields[1]), []).append(pid)  # fields[1] is the parent's pid
    total, todo = 0, [os.getpid()]
    while todo:
        pid = todo.pop()
        if pid in stats:
            total += sum(int(x) for x in stats[pid][11:15])  # utime, stime, cutime, cstime
        todo.extend(children.get(pid, ()))
    return total


def snapshot() -> Snapshot | None:
    try:
        cpu = [int(x) for x in (PROC / "stat").read_text().split("\n", 1)[0].split()[1:]]
    except (OSError, ValueError):
        return None
    user, nice, system, _idle, _iowait, irq, softirq, steal = (cpu + [0] * 8)[:8]
    return Snapshot(busy=user + nice + system + irq + softirq, steal=steal,
                    total=sum(cpu[:8]), own=_own_ticks())


class Watch:
    """Started at construction; line() describes the machine from then until now."""

    def __init__(self) -> None:
        self.start = snapshot()

    def shares(self) -> dict[str, float] | None:
        """Each as a fraction of one core over the run: busy (all work), own (this run's processes),
        other (busy minus own), steal. None where /proc is missing."""
        end = snapshot()
        if self.start is None or end is None or end.total <= self.start.total:
            return None
        cores = os.cpu_count() or 1
        per_core = (end.total - self.start.total) / cores  # ticks of wall time
        busy, own = end.busy - self.start.busy, end.own - self.start.own
        return {"busy": busy / per_core, "own": own / per_core, "other": max(busy - own, 0) / per_core,
                "steal": (end.steal - self.start.steal) / per_core, "cores": cores}

    def line(self) -> str:
        s = self.shares()
        if s is None:
            return "machine during this run: unknown (no /proc here)"
        return (f"machine during this run: {s['cores']} cores busy {100 * s['busy']:.0f}% of a core in all, this "
                f"run's processes {100 * s['own']:.0f}%, other work {100 * s['other']:.0f}%, stolen by the host "
                f"{100 * s['steal']:.0f}%")


def event_loop() -> str:
    """The event loop a Streamlit server started by this Python runs on: Streamlit takes uvloop when it can
    import it (not on Windows), asyncio's own loop otherwise."""
    return "uvloop" if os.name != "nt" and importlib.util.find_spec("uvloop") else "asyncio"
