"""Where the kit's processes run: co-located (the default) or isolated (``--isolate``).

Co-located, every process of a run (the server, Redis, the honest players and the kit's
load generator) may run on any core at the priority it was started with, so a flood's
ratio includes the CPU its generator takes from the server: a remote attacker's
generator would not. The isolated layout models the attacker, the players and Redis on
machines of their own, on a machine with two cores:

- **server** (and its verdict workers): core ``SERVER_CPU`` only, priority unchanged.
  Nothing else of the run is allowed on that core.
- **generator** (the kit's own process: the flood's connections, the spectators'
  readers): core ``OTHER_CPU``, priority unchanged (0), so it sends as hard as one core
  lets it; its achieved rate is in the report, to check it was as strong as co-located.
- **honest** players and **redis**: core ``OTHER_CPU`` too, at ``RAISED_NICE``: when one
  of them has something to do it preempts the generator, so it answers about as promptly
  as on a machine of its own and never takes the server's core. A raised nice value is a
  preference, not a guarantee: a woken process may still wait behind the generator's time
  slice (docs/SECURITY.md measured 0.1 to 0.2 ms a wake-up on average under a fan-out, with a
  tail of milliseconds). With ``fifo`` (``--others-fifo``) they run in the real-time class
  instead (``SCHED_FIFO`` priority ``FIFO_PRIORITY``): woken, they take core 1 from the
  generator at once, as the benchmarks' probe pair does (docs/BENCHMARKS.md, "What a
  player on its own machine sees"); the generator keeps what they leave, nearly all of
  it (the honest players and Redis use ~2% of a core).

Redis goes with the generator, not with the server: on a machine of its own its work runs
beside the server's, not instead of it. On the server's core every command Redis runs
would take the server's core for that time (the server's own loop, with its flood's work,
would wait behind each store call or Redis behind the server), counting Redis's CPU as
the server's; on the other core, raised above the generator, it runs in parallel with
the server and its reply waits for nothing but its own work, as it would across a
network (minus the network's round trip). What it does cost is the generator's core, which the
generator's achieved rate shows. (Loopback's kernel receive path runs on the sending
core, so the flood's packets are partly received on the generator's core, where a real
NIC would put that work on the server's host: the isolated model is a little kind to
the server there.)

The layout is applied as each process starts (the kit's own process first, so that its
children start on the other core) and applied again at every phase boundary, covering
threads and child processes started since; every process's affinity and priority as
read back from the kernel go into the report, so a run says what it ran on.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SERVER_CPU = 0  # the server's core in the isolated layout
OTHER_CPU = 1  # everyone else's: the generator, the honest players, Redis
RAISED_NICE = -10  # the honest players and Redis over the generator (needs root)
FIFO_PRIORITY = 10  # with ``fifo``: the same roles real-time instead (SCHED_FIFO)
REAL_TIME = ("honest", "redis")  # the roles ``fifo`` puts in the real-time class

# role → (cores, nice or None to leave it, whether its child processes follow it)
ISOLATED: dict[str, tuple[frozenset[int], int | None, bool]] = {
    "server": (frozenset({SERVER_CPU}), None, True),
    "generator": (frozenset({OTHER_CPU}), None, False),  # its children are the others
    "honest": (frozenset({OTHER_CPU}), RAISED_NICE, True),
    "redis": (frozenset({OTHER_CPU}), RAISED_NICE, True),
}


def check_isolation() -> str | None:
    """Why this machine cannot run the isolated layout (None if it can): it needs both
    cores in this process's affinity and the right to raise a priority (root)."""
    cpus = os.sched_getaffinity(0)
    if not {SERVER_CPU, OTHER_CPU} <= cpus:
        return (f"--isolate needs cores {SERVER_CPU} and {OTHER_CPU}; "
                f"this process may run on {sorted(cpus)}")
    if os.geteuid() != 0:
        return "--isolate raises the honest players' and Redis's priority: run as root"
    return None


def threads(pid: int) -> list[int]:
    """The thread ids of ``pid`` (empty once it is gone)."""
    try:
        return [int(tid) for tid in os.listdir(f"/proc/{pid}/task")]
    except OSError:
        return []


def descendants(pid: int) -> list[int]:
    """Every live process below ``pid`` (children, their children, …)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            ppid = int(stat.read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue  # a process that just ended
        children.setdefault(ppid, []).append(int(stat.parent.name))
    out: list[int] = []
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def place(pid: int, cpus: frozenset[int], nice: int | None, follow: bool,
          fifo: bool = False) -> None:
    """Every thread of ``pid`` (and, with ``follow``, of its descendants) on ``cpus``,
    at ``nice`` unless None, and with ``fifo`` in the real-time class (``SCHED_FIFO`` at
    ``FIFO_PRIORITY``). Linux keeps affinity and priority per thread; new threads and
    processes inherit them from the thread that makes them. A thread that ends meanwhile
    is skipped."""
    for proc in [pid, *(descendants(pid) if follow else [])]:
        for tid in threads(proc):
            try:
                os.sched_setaffinity(tid, cpus)
                if nice is not None:
                    os.setpriority(os.PRIO_PROCESS, tid, nice)
                if fifo:
                    os.sched_setscheduler(tid, os.SCHED_FIFO, os.sched_param(FIFO_PRIORITY))
            except ProcessLookupError:
                continue


def cpu_list(cpus: set[int] | frozenset[int]) -> str:
    """``{0}`` → ``"0"``, ``{0, 1}`` → ``"0-1"``, ``{0, 2}`` → ``"0,2"``."""
    s = sorted(cpus)
    if len(s) > 1 and s == list(range(s[0], s[-1] + 1)):
        return f"{s[0]}-{s[-1]}"
    return ",".join(map(str, s))


@dataclass
class Layout:
    """The run's processes by role, placed as ``ISOLATED`` says when ``isolate``."""

    isolate: bool
    fifo: bool = False  # the ``REAL_TIME`` roles in the real-time class (isolated only)
    roles: dict[str, list[int]] = field(default_factory=dict)
    # the cores each process had before it was placed (``restore`` puts the kit's own
    # process back: a test calls the runner in its own process)
    before: dict[int, frozenset[int]] = field(default_factory=dict)

    def add(self, role: str, pid: int) -> None:
        """Record ``pid`` as one of ``role`` and (isolated) place it."""
        self.roles.setdefault(role, []).append(pid)
        if self.isolate:
            self.before.setdefault(pid, frozenset(os.sched_getaffinity(pid)))
            place(pid, *ISOLATED[role], fifo=self.fifo and role in REAL_TIME)

    def restore(self, pid: int) -> None:
        """Put ``pid``'s threads back on the cores it had before it was placed (its
        priority was left as it was: the kit's own process is not reniced)."""
        if pid in self.before:
            place(pid, self.before[pid], None, False)

    def reapply(self) -> None:
        """Place every recorded process again (threads and children started since)."""
        if self.isolate:
            for role, pids in self.roles.items():
                for pid in pids:
                    place(pid, *ISOLATED[role], fifo=self.fifo and role in REAL_TIME)

    def report(self) -> dict[str, Any]:
        """The mode, and per role: processes (with their children), the cores and nice
        values their threads have, as the kernel reports them now, and ``fifo`` for a
        role whose threads are all in the real-time class."""
        roles: dict[str, Any] = {}
        for role, pids in self.roles.items():
            follow = ISOLATED[role][2]
            procs = [p for pid in pids for p in [pid, *(descendants(pid) if follow else [])]]
            cpus: set[str] = set()
            nices: set[int] = set()
            policies: set[int] = set()
            for proc in procs:
                for tid in threads(proc):
                    try:
                        cpus.add(cpu_list(os.sched_getaffinity(tid)))
                        nices.add(os.getpriority(os.PRIO_PROCESS, tid))
                        policies.add(os.sched_getscheduler(tid))
                    except (ProcessLookupError, OSError):
                        continue
            roles[role] = {"processes": len(procs), "cpus": sorted(cpus),
                           "nice": sorted(nices)}
            if policies == {os.SCHED_FIFO}:
                roles[role]["fifo"] = True
        return {"mode": "isolated" if self.isolate else "co-located", "roles": roles}


def describe(report: dict[str, Any]) -> str:
    """One line of a layout report: ``isolated: server x2 cpu 0 nice 0; …``."""
    parts = []
    for role, r in report["roles"].items():
        nice = "/".join(map(str, r["nice"]))
        fifo = " SCHED_FIFO" if r.get("fifo") else ""
        parts.append(f"{role} x{r['processes']} cpu {'/'.join(r['cpus'])} nice {nice}{fifo}")
    return f"{report['mode']}: " + "; ".join(parts)
