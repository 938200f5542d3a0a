"""Group commit of move appends on a standalone Redis (``RedisStore.append_move``).

A node's moves of one loop tick share one pipelined round trip instead of one each: the
way databases batch their log writes. Kept apart from ``redis.py`` because it is a
mechanism of its own (batching, per-item replies, in-flight bound, script reload), not a
store operation.
"""

from __future__ import annotations

import asyncio
from typing import Any

from redis.exceptions import NoScriptError

from .base import StoreUnavailable


class GroupCommit:
    """Group commit of ``append_move`` on a standalone Redis: the appends submitted in
    one loop tick (any seats, any rooms of this node) go to Redis as one pipeline of
    APPEND_MOVE calls — one write, one round trip — followed, with ``wait_replicas``, by
    one ``WAIT`` that covers them all. Each caller gets its own script reply (so a stale
    epoch or a sequence conflict fails only its own move); a failure of the round trip
    itself (connection, timeout, too few replicas) is ``StoreUnavailable`` for the moves
    of that batch, and none of them is acknowledged.

    At most ``MAX_IN_FLIGHT`` batches are on the wire at once; appends submitted
    meanwhile wait for the next batch (they grow it: the busier the node, the fewer round
    trips per move). Scripts are sent by SHA (``EVALSHA``) without redis-py's per-pipeline
    ``SCRIPT EXISTS``; a ``NOSCRIPT`` reply (Redis restarted or flushed its scripts: the
    call did nothing) loads the script and sends those calls again."""

    MAX_IN_FLIGHT = 2  # one batch on the wire while the next one fills
    MAX_BATCH = 512  # calls per pipeline (bounds one reply's size and one batch's latency)

    def __init__(self, client: Any, script: Any, wait_replicas: int, timeout_s: float,
                 wait_timeout_ms: int) -> None:
        self._client = client
        self._script = script
        self._wait = wait_replicas
        self._timeout_s = timeout_s  # one deadline for a whole batch's round trip
        self._wait_timeout_ms = wait_timeout_ms
        self._queue: list[tuple[list[str], list[Any], asyncio.Future[Any]]] = []
        self._in_flight = 0
        self._scheduled = False
        self._tasks: set[asyncio.Task[None]] = set()

    async def submit(self, keys: list[str], args: list[Any]) -> Any:
        """Queue one APPEND_MOVE call for the next batch; its reply (or StoreUnavailable)."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        self._queue.append((keys, args, future))
        if not self._scheduled:
            # After the callbacks already due in this tick: the moves they read join too.
            self._scheduled = True
            loop.call_soon(self._start)
        return await future

    def _start(self) -> None:
        self._scheduled = False
        while self._queue and self._in_flight < self.MAX_IN_FLIGHT:
            batch = self._queue[:self.MAX_BATCH]
            del self._queue[:self.MAX_BATCH]
            self._in_flight += 1
            task = asyncio.get_running_loop().create_task(self._commit(batch))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _commit(self, batch: list[tuple[list[str], list[Any], asyncio.Future[Any]]]
                      ) -> None:
        try:
            try:
                async with asyncio.timeout(self._timeout_s):  # one deadline for the batch
                    replies = await self._execute([(k, a) for k, a, _ in batch])
            except Exception as exc:  # any failure of the round trip: see RedisStore._run
                detail = str(exc) or type(exc).__name__
                for _, _, future in batch:
                    if not future.done():
                        future.set_exception(
                            StoreUnavailable(f"redis append_move failed: {detail}"))
                return
            for (_, _, future), reply in zip(batch, replies, strict=True):
                if future.done():
                    continue
                if isinstance(reply, BaseException):
                    future.set_exception(StoreUnavailable(f"redis append_move failed: {reply}"))
                else:
                    future.set_result(reply)
        finally:
            self._in_flight -= 1
            if self._queue and not self._scheduled:
                self._start()

    async def _execute(self, calls: list[tuple[list[str], list[Any]]]) -> list[Any]:
        """One pipeline: every call, then WAIT (if asked). Per-call replies; a call whose
        replicas did not confirm in time gets a StoreUnavailable in its place."""
        replies = await self._pipeline(calls)
        missing = [i for i, r in enumerate(replies) if isinstance(r, NoScriptError)]
        if missing:  # nothing ran for these: load the script, send them again
            await self._client.script_load(self._script.script)
            again = await self._pipeline([calls[i] for i in missing])
            for i, reply in zip(missing, again, strict=True):
                replies[i] = reply
        return replies

    async def _pipeline(self, calls: list[tuple[list[str], list[Any]]]) -> list[Any]:
        sha = self._script.sha
        async with self._client.pipeline(transaction=False) as pipe:
            for keys, args in calls:
                pipe.execute_command("EVALSHA", sha, len(keys), *keys, *args)
            if self._wait:
                pipe.execute_command("WAIT", self._wait, self._wait_timeout_ms)
            replies: list[Any] = list(await pipe.execute(raise_on_error=False))
        if not self._wait:
            return replies
        replicas = replies.pop()
        if isinstance(replicas, BaseException):
            raise replicas
        if int(replicas) < self._wait:
            short = StoreUnavailable(
                f"moves on {replicas} replica(s), not {self._wait}, within "
                f"{self._wait_timeout_ms} ms")
            # Stored on the master but not acknowledged; the client's retry (same seq,
            # same move) is recognised by the script and waits again.
            return [short if not isinstance(r, BaseException) and int(r[0]) >= 0 else r
                    for r in replies]
        return replies

    async def close(self) -> None:
        """Wait (bounded by the batches' own deadline) for the batches on the wire."""
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
