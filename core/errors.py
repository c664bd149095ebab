"""Typed errors. str(error) is one sentence a person can act on; the log carries the detail."""


class AssistantError(Exception):
    """Base of every error a person may see; str(e) is one clear sentence saying what happened and what to do.

    `key` (optional) names the same sentence in static/i18n.json and `values` fill its {placeholders}, so the
    UI can show it in the person's language: `InvalidRequest("The note is empty; write something first.",
    key="err_note_empty")`. str(e) stays the English sentence the log and the tests read."""

    def __init__(self, *args, key: str | None = None, **values):
        super().__init__(*args)
        self.key, self.values = key, values


class DocumentError(AssistantError):
    """A file that cannot be read as a document (corrupt, encrypted, empty, unsupported)."""


class StoreUnavailable(AssistantError):
    """A configured store (Qdrant server, Neo4j, the data folder) cannot be reached or opened."""


class StoreDamaged(StoreUnavailable):
    """A store's file that is not a whole database any more (emptied, cut short, its header garbled, failing
    SQLite's quick_check): refused, never recreated empty; `python -m assistant repair` restores its backup.
    `store` is the file's path relative to the data folder ("study/cards.sqlite3")."""

    def __init__(self, *args, store: str = "", **kwargs):
        super().__init__(*args, **kwargs)
        self.store = store


class DiskFull(StoreUnavailable):
    """A write failed because the disk is full (SQLite's 'database or disk is full', ENOSPC): nothing was
    written, nothing is damaged; it works again once there is space."""

    def __init__(self):
        super().__init__("The disk holding the app's data is full; free some space on it and try again.",
                         key="err_disk_full")


def is_disk_full(exc: BaseException | None) -> bool:
    """Whether `exc`, or an error it was raised from, is a full disk: SQLite's SQLITE_FULL or OSError ENOSPC."""
    import errno
    import sqlite3
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, DiskFull):
            return True
        if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
            return True
        if isinstance(exc, sqlite3.Error) and (getattr(exc, "sqlite_errorname", "") == "SQLITE_FULL"
                                               or "database or disk is full" in str(exc)):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


class LLMError(AssistantError):
    """The language model endpoint failed, timed out or refused the request."""


class EmbeddingError(AssistantError):
    """The embedding model could not be loaded or the embedding endpoint failed."""


class InvalidRequest(AssistantError):
    """A call with arguments that cannot be honoured (unknown action, empty text, bad range)."""


class EmbeddingMismatch(EmbeddingError):
    """Stored vectors were written by another embedding model than the one configured now."""

    def __init__(self, recorded: str, configured: str):
        self.recorded, self.configured = recorded, configured
        super().__init__(
            f"Your documents were indexed with the embedding model '{recorded}', not '{configured}'; "
            "switch the embedding model back, or re-index with `python -m rag reindex` before searching.",
            key="err_embedding_mismatch")


class Notice(str):
    """A sentence for the person that is not an error (a page read by OCR, a page left unread): a str of the
    English sentence, so code that logs, stores or joins it needs nothing new, plus an i18n key and values so
    the UI can show it in the person's language (`ui.common.said`). Stored and read back, it is a plain str
    again, shown in English."""

    def __new__(cls, text: str, key: str | None = None, **values):
        notice = super().__new__(cls, text)
        notice.key, notice.values = key, values
        return notice

    @classmethod
    def of(cls, error: AssistantError) -> "Notice":
        """An error's own sentence as a notice (inside another one: "The model failed: {error}")."""
        return cls(str(error), error.key, **error.values)
