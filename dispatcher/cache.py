"""The per-geometry decision cache: a choice is made once per process and reused."""

from __future__ import annotations

import threading
from collections.abc import Callable

from .decision import Decision


class DecisionCache:
    """Thread-safe map from (geometry, device, chooser) to a Decision."""

    def __init__(self) -> None:
        # Reentrant: a decision may read other decisions of the same geometry, made by the
        # same thread under the lock (the rule's "backward" choice reads the dgrad and
        # wgrad ones); with a plain lock that thread waited on itself.
        self._lock = threading.RLock()
        self._data: dict[tuple, Decision] = {}
        self.hits = 0
        self.misses = 0

    def get_or_make(self, key: tuple, make: Callable[[], Decision]) -> Decision:
        dec = self._data.get(key)
        if dec is not None:
            self.hits += 1
            return dec
        with self._lock:
            dec = self._data.get(key)
            if dec is None:
                # Made under the lock so concurrent first calls agree on one decision.
                dec = make()
                self._data[key] = dec
                self.misses += 1
            return dec

    def clear(self) -> None:
        with self._lock:
            self._data.clear()
            self.hits = self.misses = 0

    def __len__(self) -> int:
        return len(self._data)

    def items(self) -> list[tuple[tuple, Decision]]:
        with self._lock:
            return list(self._data.items())
