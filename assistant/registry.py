"""One assistant per user, never one shared by every visitor.

The registry keeps a PDFLearningAssistant per (data folder, user id), created on first use under a
per-key lock, so two tabs of one person share one instance (and its write lock) while different
people never share anything.
"""
from __future__ import annotations

import threading

from core.settings import Settings, get_settings


class AssistantRegistry:
    def __init__(self, settings: Settings | None = None):
        self.settings = settings or get_settings()
        self._assistants: dict[str, object] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._lock = threading.Lock()

    def get(self, user_id: str):
        from assistant.facade import PDFLearningAssistant
        from core.errors import InvalidRequest
        if not isinstance(user_id, str) or not user_id.strip():
            raise InvalidRequest("A user name is required.", key="err_user_required")
        user_id = user_id.strip()
        with self._lock:
            found = self._assistants.get(user_id)
            if found is not None:
                return found
            user_lock = self._locks.setdefault(user_id, threading.Lock())
        with user_lock:  # building one loads models; other users are not held up meanwhile
            with self._lock:
                found = self._assistants.get(user_id)
            if found is None:
                found = PDFLearningAssistant(user_id, self.settings)
                with self._lock:
                    self._assistants[user_id] = found
            return found

    def users(self) -> list[str]:
        with self._lock:
            return sorted(self._assistants)


_registries: dict[str, AssistantRegistry] = {}
_registries_lock = threading.Lock()


def registry_for(settings: Settings | None = None) -> AssistantRegistry:
    settings = settings or get_settings()
    key = str(settings.data_dir.resolve())
    with _registries_lock:
        if key not in _registries:
            _registries[key] = AssistantRegistry(settings)
        return _registries[key]


def get_assistant(user_id: str, settings: Settings | None = None):
    """The assistant of this user (for these settings' data folder)."""
    return registry_for(settings).get(user_id)
