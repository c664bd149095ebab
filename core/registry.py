"""One shared instance per key per process: a data folder's store, a database connection, a graph.

Local Qdrant allows one client per folder and SQLite connections are best shared behind a lock, so
every such resource is opened once per process through a registry and closed through it.
"""
from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class ProcessRegistry(Generic[T]):
    def __init__(self) -> None:
        self._items: dict[str, T] = {}
        self._lock = threading.Lock()

    def get(self, key: str, create: Callable[[], T]) -> T:
        """The instance for `key`, created by `create()` on first use (under the lock, so once)."""
        with self._lock:
            if key not in self._items:
                self._items[key] = create()
            return self._items[key]

    def close(self, key: str) -> None:
        """Close and forget the instance for `key`, if one is open."""
        with self._lock:
            item = self._items.pop(key, None)
        if item is not None:
            item.close()

    def close_all(self) -> None:
        with self._lock:
            items, self._items = list(self._items.values()), {}
        for item in items:
            item.close()
