"""MemoryTool: the agent-facing facade, `execute(action, **kwargs)`, a thin dispatcher onto
MemoryManager's typed methods. It returns a `ToolResult`: `ok`, a short text for the agent or
person (`str(result)`), and the typed `data` the method returned. Errors the person can act on come
back as `ok=False` with one sentence; they are never reported as success.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from core.errors import AssistantError, InvalidRequest
from core.settings import Settings
from memory.manager import MemoryManager, check_query_length
from memory.types import MemoryItem, MemoryType

log = logging.getLogger(__name__)

ACTIONS = ("add", "search", "get", "summary", "stats", "update", "remove", "forget", "consolidate", "clear_all")


@dataclass
class ToolResult:
    ok: bool
    action: str
    message: str
    data: Any = None

    def __str__(self) -> str:
        return self.message


class MemoryTool:
    name = "memory"
    description = ("Remember and recall what the user did and learned. Actions: " + ", ".join(ACTIONS) + ".")

    def __init__(self, user_id: str, settings: Settings | None = None, *, manager: MemoryManager | None = None):
        self.manager = manager or MemoryManager(settings, user_id)
        self.user_id = self.manager.user_id

    def execute(self, action: str, **kwargs) -> ToolResult:
        name = action.strip().lower() if isinstance(action, str) else action
        if name not in ACTIONS:
            err = InvalidRequest(f"Unknown memory action '{action}'; use one of: {', '.join(ACTIONS)}.")
            return ToolResult(False, str(action), str(err))
        try:
            return getattr(self, f"_{name}")(**kwargs)
        except AssistantError as exc:
            return ToolResult(False, name, str(exc))
        except TypeError as exc:  # a wrong keyword argument from the caller
            log.debug("bad arguments for %s", name, exc_info=True)
            return ToolResult(False, name, f"Wrong arguments for the memory action '{name}': {exc}.")

    # -- actions ---------------------------------------------------------------------------------
    def _add(self, content: str = "", memory_type: str = "working", importance: float = 0.5, **kw) -> ToolResult:
        item = self.manager.add(content, memory_type, importance, **kw)
        message = f"Remembered ({item.memory_type.value}, id {item.id})."
        if item.memory_type is MemoryType.SEMANTIC and self.manager.semantic.graph.pending_writes(self.user_id):
            message += " The graph server is away, so its concepts are linked when it is back."
        return ToolResult(True, "add", message, item)

    def _search(self, query: str = "", limit: int = 5, **kw) -> ToolResult:
        hits = self.manager.search(check_query_length(query), limit=limit, **kw)
        if not hits:
            return ToolResult(True, "search", f"No memories found for '{query}'.", hits)
        lines = [f"{i}. [{h.memory_type.value}] {h.content} (score {h.score:.3f}, id {h.id})"
                 for i, h in enumerate(hits, start=1)]
        return ToolResult(True, "search", f"Found {len(hits)} memories:\n" + "\n".join(lines), hits)

    def _get(self, memory_id: str = "") -> ToolResult:
        item = self.manager.get(memory_id)
        if item is None:
            return ToolResult(False, "get", f"There is no memory '{memory_id}' for user '{self.user_id}'.")
        return ToolResult(True, "get", _describe(item), item)

    def _summary(self, limit: int = 5) -> ToolResult:
        s = self.manager.summary(limit)
        return ToolResult(True, "summary", s.text, s)

    def _stats(self) -> ToolResult:
        s = self.manager.stats()
        counts = ", ".join(f"{n} {t}" for t, n in s.counts.items())
        return ToolResult(True, "stats", f"{s.total} memories ({counts}).", s)

    def _update(self, memory_id: str = "", **kw) -> ToolResult:
        item = self.manager.update(memory_id, **kw)
        return ToolResult(True, "update", f"Updated memory {item.id}.", item)

    def _remove(self, memory_id: str = "") -> ToolResult:
        item = self.manager.remove(memory_id)
        return ToolResult(True, "remove", f"Removed memory {item.id}.", item)

    def _forget(self, strategy: str = "importance_based", **kw) -> ToolResult:
        r = self.manager.forget(strategy, **kw)
        return ToolResult(True, "forget", f"Forgot {r.removed} memories ({r.strategy.value}).", r)

    def _consolidate(self, **kw) -> ToolResult:
        r = self.manager.consolidate(**kw)
        return ToolResult(True, "consolidate", f"Consolidated {r.promoted} memories.", r)

    def _clear_all(self) -> ToolResult:
        r = self.manager.clear_all()
        return ToolResult(True, "clear_all", f"Deleted all {r.total} memories of {self.user_id}.", r)


def _describe(item: MemoryItem) -> str:
    return (f"[{item.memory_type.value}] {item.content} (importance {item.importance:.2f}, "
            f"{item.timestamp:%Y-%m-%d %H:%M} UTC, id {item.id})")
