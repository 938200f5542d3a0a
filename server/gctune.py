"""Garbage-collector settings for a serving node (called once, after start-up).

A node's heap is mostly long-lived: the modules, the engine's tables and the code loaded
at start-up, then per connection the websockets and asyncio objects that live as long as
the client stays. CPython's cyclic collector walks every tracked object of a generation
it collects, so a full (generation 2) collection on a node holding thousands of
connections stops the event loop for hundreds of milliseconds (docs/BENCHMARKS.md, the
``conns`` row). Two settings make it quieter:

- ``gc.freeze()`` after start-up moves every object alive then (imports, config, the
  listening server) to a permanent generation no collection walks again: every later
  full collection skips the start-up heap.
- Higher thresholds: a young collection every ``GEN0_THRESHOLD`` allocations instead of
  every 700 (each is cheap, but a busy node makes tens of thousands of short-lived
  objects a second), and fewer promotions to the old generations. Reference counting
  frees almost everything the move path allocates; the collector is only for cycles.

The pauses themselves are measured by ``solrace_gc_pause_seconds{generation}`` on
``/metrics`` (``server.metrics``, via ``gc.callbacks``).
"""

from __future__ import annotations

import gc

# Allocations (minus deallocations) of tracked objects between young collections.
# 700 is CPython's default; 20,000 keeps a young collection to a few milliseconds while
# making them ~30x rarer.
GEN0_THRESHOLD = 20_000
# Young collections per generation-1 collection, and generation-1 collections per full
# one (CPython also waits until the old generation grew by 25% before a full one). With
# these, 10,000 connections opening saw no full collection at all; the longest pause
# was a generation-1 collection of the fresh connections (~0.3 s of CPU on the loaded
# test machine, docs/BENCHMARKS.md). Smaller (5,000, 5, 10) brought full collections
# back (two, the longest 0.48 s of CPU) in the same measurement.
GEN1_THRESHOLD = 20
GEN2_THRESHOLD = 20


def tune_after_start() -> None:
    """Collect once, freeze what start-up left (never walked again), and raise the
    thresholds (module docstring). Idempotent enough to call once per node start: a
    second call freezes the objects created since, which is what start-up means for a
    process hosting several nodes (tests)."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(GEN0_THRESHOLD, GEN1_THRESHOLD, GEN2_THRESHOLD)
