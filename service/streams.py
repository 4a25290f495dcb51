"""Pages read by concurrent readers, yielded as one async stream in the consumer's pace."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Sequence
from typing import Any

from service.errors import ServiceError

Record = dict[str, Any]
Emit = Callable[[Sequence[Record]], Awaitable[None]]
Spawn = Callable[[Coroutine[Any, Any, Any]], "asyncio.Task[Any]"]


class _Failed:
    __slots__ = ("error",)

    def __init__(self, error: BaseException):
        self.error = error


_DONE = object()


def leaf_error(error: BaseException) -> BaseException:
    """The most useful single exception inside (nested) exception groups."""
    if isinstance(error, BaseExceptionGroup):
        leaves = [leaf_error(e) for e in error.exceptions]
        for leaf in leaves:
            if isinstance(leaf, ServiceError):
                return leaf
        for leaf in leaves:
            if not isinstance(leaf, asyncio.CancelledError):
                return leaf
        return leaves[0]
    return error


async def stream(
    run: Callable[[Emit, Spawn], Awaitable[None]], *, maxsize: int
) -> AsyncIterator[Sequence[Record]]:
    """Run `run(emit, spawn)` in the background and yield what it emits, as it comes.

    Any failure of a reader cancels the others and is raised to the consumer; closing the
    generator early cancels all readers.
    """
    queue: asyncio.Queue[Any] = asyncio.Queue(maxsize=max(1, maxsize))

    async def emit(records: Sequence[Record]) -> None:
        if records:
            await queue.put(records)

    async def supervisor() -> None:
        try:
            async with asyncio.TaskGroup() as group:
                await run(emit, group.create_task)
        except BaseException as exc:
            if isinstance(exc, asyncio.CancelledError):
                raise
            await queue.put(_Failed(leaf_error(exc)))
        else:
            await queue.put(_DONE)

    task = asyncio.create_task(supervisor())
    try:
        while True:
            item = await queue.get()
            if item is _DONE:
                break
            if isinstance(item, _Failed):
                raise item.error
            yield item
    finally:
        if not task.done():
            task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
