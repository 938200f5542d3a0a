"""A process's CPU time and memory, read from ``/proc`` (Linux): the server's own cost,
not the load generator's, which shares the same cores.

``cpu_seconds(pid)`` is utime + stime of ``/proc/PID/stat`` (the process's threads
included) in seconds; ``CpuWindow`` takes the difference over a measured window, so a
benchmark divides it by the moves or frames of that window only (start-up and warm-up
excluded).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

TICKS = os.sysconf("SC_CLK_TCK")  # utime/stime unit (100 Hz on Linux: 10 ms resolution)


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds ``pid`` has used so far."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as f:
        text = f.read()
    # Fields after the command name, which is in parentheses and may contain spaces.
    fields = text[text.rindex(")") + 2 :].split()
    utime, stime = int(fields[11]), int(fields[12])  # fields 14 and 15 of proc(5)
    return (utime + stime) / TICKS


def rss_bytes(pid: int) -> int:
    """Resident set size of ``pid`` now (VmRSS of ``/proc/PID/status``)."""
    with open(f"/proc/{pid}/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"no VmRSS for pid {pid}")


def load_average() -> str:
    """The 1/5/15-minute load averages, as ``uptime`` prints them (the machine is shared:
    every report carries this next to its figures)."""
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} {five:.2f} {fifteen:.2f}"


@dataclass
class CpuWindow:
    """CPU seconds ``pid`` spent between ``start()`` and ``stop()``."""

    pid: int
    started: float = 0.0
    seconds: float = 0.0

    def start(self) -> None:
        """Open the window."""
        self.started = cpu_seconds(self.pid)

    def stop(self) -> float:
        """Close the window; the CPU seconds spent in it."""
        self.seconds = cpu_seconds(self.pid) - self.started
        return self.seconds

    def us_per(self, count: int) -> float:
        """CPU microseconds per unit of work (``count`` moves or frames in the window);
        NaN when nothing was counted."""
        return self.seconds * 1e6 / count if count else float("nan")
