"""Exact in-process dense search for Qdrant's local mode.

Qdrant's local (embedded) mode is a brute-force numpy scan that re-normalises every stored vector on
every query: ~100 ms per search at 100k memories on this machine, twice the target. Our vectors are
unit length already, so a dot product over one matrix gives the same ranking at a tenth of the cost.
In local mode, each user's memories of one type are therefore also kept as one float32 matrix in
process, loaded lazily from the embeddings SQLite keeps and updated on every add / remove, and
dense search is served from it. Qdrant still stores every vector (it is what a Qdrant server
deployment searches, with HNSW, when QDRANT_URL is set). Local mode allows one process per data
folder, so this cache cannot go stale behind our back.
"""
from __future__ import annotations

import threading
from collections.abc import Callable

import numpy as np

_GROW = 1.5


class DenseIndex:
    def __init__(self, loader: Callable[[], tuple[list[str], np.ndarray | None]]):
        self._loader = loader
        self._lock = threading.RLock()
        self._loaded = False
        self._ids: list[str | None] = []     # row -> id (None = removed)
        self._rows: dict[str, int] = {}      # id -> row
        self._matrix = np.zeros((0, 0), dtype=np.float32)
        self._alive = np.zeros(0, dtype=bool)
        self._n = 0                          # rows in use (alive or not)

    def _load(self) -> None:
        if self._loaded:
            return
        ids, mat = self._loader()
        self._ids, self._rows = [], {}
        self._matrix = np.zeros((0, 0), dtype=np.float32)
        self._alive = np.zeros(0, dtype=bool)
        self._n = 0
        self._loaded = True
        if ids:
            self._append(ids, mat)

    def _append(self, ids: list[str], vectors: np.ndarray) -> None:
        vectors = np.asarray(vectors, dtype=np.float32)
        need = self._n + len(ids)
        if self._matrix.shape[0] < need or self._matrix.shape[1] != vectors.shape[1]:
            capacity = max(need, int(self._matrix.shape[0] * _GROW), 1024)
            grown = np.zeros((capacity, vectors.shape[1]), dtype=np.float32)
            alive = np.zeros(capacity, dtype=bool)
            if self._n and self._matrix.shape[1] == vectors.shape[1]:
                grown[:self._n] = self._matrix[:self._n]
                alive[:self._n] = self._alive[:self._n]
            self._matrix, self._alive = grown, alive
        for k, mid in enumerate(ids):
            old = self._rows.get(mid)
            if old is not None:                   # re-embedded: the old row dies
                self._alive[old] = False
                self._ids[old] = None
            row = self._n + k
            self._rows[mid] = row
            self._ids.append(mid)
        self._matrix[self._n:need] = vectors
        self._alive[self._n:need] = True
        self._n = need

    # -- maintenance -----------------------------------------------------------------------------
    def add(self, ids: list[str], vectors: np.ndarray) -> None:
        with self._lock:
            if self._loaded:               # not loaded yet: the loader will read these from SQLite
                self._append(ids, vectors)

    def remove(self, ids: list[str]) -> None:
        with self._lock:
            if not self._loaded:
                return
            for mid in ids:
                row = self._rows.pop(mid, None)
                if row is not None:
                    self._alive[row] = False
                    self._ids[row] = None
            if self._n > 1024 and self._alive[:self._n].sum() < self._n // 2:
                self._loaded = False       # mostly holes: reload compactly on the next search

    def clear(self) -> None:
        with self._lock:
            self._loaded = False
            self._ids, self._rows = [], {}
            self._matrix = np.zeros((0, 0), dtype=np.float32)
            self._alive = np.zeros(0, dtype=bool)
            self._n = 0

    # -- search ----------------------------------------------------------------------------------
    def search(self, query: np.ndarray, limit: int) -> list[tuple[str, float]]:
        """(id, cosine) of the `limit` nearest live rows, best first."""
        with self._lock:
            self._load()
            if not self._rows:
                return []
            scores = self._matrix[:self._n] @ np.asarray(query, dtype=np.float32)
            scores[~self._alive[:self._n]] = -np.inf
            k = min(limit, len(self._rows))
            top = np.argpartition(-scores, k - 1)[:k] if k < self._n else np.arange(self._n)
            top = top[np.argsort(-scores[top])]
            return [(self._ids[i], float(scores[i])) for i in top if self._alive[i]][:limit]

    def search_among(self, query: np.ndarray, limit: int, allowed: list[str]) -> list[tuple[str, float]]:
        """Like `search`, restricted to the ids in `allowed` (e.g. those passing a time filter)."""
        with self._lock:
            self._load()
            rows = np.fromiter((self._rows[i] for i in allowed if i in self._rows), dtype=np.int64)
            if rows.size == 0:
                return []
            scores = self._matrix[rows] @ np.asarray(query, dtype=np.float32) if rows.size < self._n // 4 \
                else (self._matrix[:self._n] @ np.asarray(query, dtype=np.float32))[rows]
            k = min(limit, rows.size)
            top = np.argpartition(-scores, k - 1)[:k] if k < rows.size else np.arange(rows.size)
            top = top[np.argsort(-scores[top])]
            return [(self._ids[rows[i]], float(scores[i])) for i in top]

    def cosines(self, query: np.ndarray, ids: list[str]) -> dict[str, float]:
        with self._lock:
            self._load()
            rows = [(mid, self._rows[mid]) for mid in ids if mid in self._rows]
            if not rows:
                return {}
            sims = self._matrix[[r for _, r in rows]] @ np.asarray(query, dtype=np.float32)
            return {mid: float(s) for (mid, _), s in zip(rows, sims)}

    def __len__(self) -> int:
        with self._lock:
            self._load()
            return len(self._rows)


_indexes: dict[tuple, DenseIndex] = {}
_indexes_lock = threading.Lock()


def get_dense_index(key: tuple, loader: Callable[[], tuple[list[str], np.ndarray | None]]) -> DenseIndex:
    """The process-wide index for `key` = (data folder, user id, memory type)."""
    with _indexes_lock:
        if key not in _indexes:
            _indexes[key] = DenseIndex(loader)
        return _indexes[key]


def drop_dense_indexes(data_dir_key: str) -> None:
    with _indexes_lock:
        for key in [k for k in _indexes if k[0] == data_dir_key]:
            del _indexes[key]
