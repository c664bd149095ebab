"""Nobody blocked: while a document is being embedded, the same person's notes and questions and
other people's questions go on. The ingest is held in the middle of its embedding (its progress callback
waits on an event), so what is checked is "not blocked by it", never a timing."""
from __future__ import annotations

import threading

from assistant import PDFLearningAssistant
from tests.reliability.library import large_pdf

SECTION = "Load"
NOTES = """# Glaciers

A glacier is a persistent body of dense ice that is constantly moving under its own weight.
"""


def paused_ingest(assistant: PDFLearningAssistant, path):
    """Start loading `path` in a thread that stops at its first embedding batch; returns (thread, release,
    paused, outcome)."""
    paused, release = threading.Event(), threading.Event()
    outcome: dict = {}

    def progress(stage: str, done: int, total: int) -> None:
        if stage == "embed" and done > 0 and not paused.is_set():
            paused.set()
            release.wait(120)

    def run() -> None:
        try:
            outcome["result"] = assistant.load_document(path, progress=progress)
        except Exception as exc:  # noqa: BLE001 - reported by the test
            outcome["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, release, paused, outcome


def test_an_ingest_in_the_middle_of_embedding_blocks_no_note_and_no_question(settings, tmp_path, reliability):
    reader = PDFLearningAssistant("reader", settings)
    reader.rag.add_text(NOTES, title="Glacier notes", name="glaciers.md")
    owner = PDFLearningAssistant("owner", settings)
    owner.rag.add_text(NOTES, title="Glacier notes", name="glaciers.md")
    book = tmp_path / "book.pdf"
    book.write_bytes(large_pdf(pages=30, chinese_pages=0))

    thread, release, paused, outcome = paused_ingest(owner, book)
    try:
        assert paused.wait(300), outcome.get("error") or "the ingest never reached its embedding"
        done: dict = {}

        def meanwhile() -> None:
            done["note"] = owner.add_note("Glaciers move under their own weight.", "Glacier")
            done["own question"] = owner.ask_once("What is a glacier?")
            done["other question"] = reader.ask_once("What is a glacier?")

        worker = threading.Thread(target=meanwhile, daemon=True)
        worker.start()
        worker.join(180)
        finished_while_paused = not worker.is_alive() and thread.is_alive()
    finally:
        release.set()
        thread.join(300)
    assert finished_while_paused, "a note or a question waited for the ingest"
    assert done["own question"].citations and done["other question"].citations
    assert "error" not in outcome and outcome["result"].chunks > 0
    assert any(n.content.startswith("Glaciers move") for n in owner.list_notes())
    reliability.record(SECTION, "a note and questions (same user, another user) while a 30-page PDF is held "
                                "in the middle of its embedding",
                       f"all three done while the ingest waited; it then finished ({outcome['result'].chunks} "
                       "passages)")


def test_searches_wait_for_each_other_only_on_the_embedded_qdrant(tmp_path, reliability):
    """Local Qdrant is not thread-safe, so its calls take the store's lock; a server's client is, so
    its searches do not queue behind another user's collection change."""
    import numpy as np
    from qdrant_client import QdrantClient

    from core.vectors import VectorStore

    def searched_while_locked(store: VectorStore) -> bool:
        """Whether a search from another thread finished while the store's lock was held here."""
        store.ensure_collection("notes", 4)
        store.upsert("notes", ["a"], np.ones((1, 4), dtype=np.float32), [{"doc_id": "d"}])
        done = threading.Event()
        worker = threading.Thread(target=lambda: (store.search("notes", np.ones(4, dtype=np.float32), 1),
                                                  done.set()), daemon=True)
        with store._lock:                          # as another thread creating or dropping a collection
            worker.start()
            finished = done.wait(3)
        worker.join(30)
        assert done.is_set(), "the search never finished"
        return finished

    server_like = VectorStore(QdrantClient(":memory:"), local=False)    # the client kind QDRANT_URL gives
    embedded = VectorStore(QdrantClient(path=str(tmp_path / "qdrant")), local=True)
    try:
        assert searched_while_locked(server_like)
        assert not searched_while_locked(embedded)
    finally:
        embedded.close()
    reliability.record(SECTION, "a search while another thread changes collections",
                       "with a Qdrant server's client it runs at once; with embedded Qdrant it waits for the lock")
