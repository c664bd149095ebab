"""Typed errors. str(error) is one sentence a person can act on; the log carries the detail."""


class AssistantError(Exception):
    """Base of every error a person may see; str(e) is one clear sentence saying what happened and what to do."""


class DocumentError(AssistantError):
    """A file that cannot be read as a document (corrupt, encrypted, empty, unsupported)."""


class StoreUnavailable(AssistantError):
    """A configured store (Qdrant server, Neo4j, the data folder) cannot be reached or opened."""


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
            "switch the embedding model back, or re-index with `python -m rag reindex` before searching.")
