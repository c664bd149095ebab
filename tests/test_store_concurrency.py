"""Many people reading the documents store while others join: a new person's BM25 table (a schema change on the
writer) must not make anyone's search fail. Ten askers at once in bench/concurrency.py met
"vtable constructor failed" when one person's first question made its term-count table."""
from __future__ import annotations

import threading
import time

from rag.store import DocumentRecord, DocumentStore
from rag.types import Chunk


def _document(store: DocumentStore, user: str) -> None:
    doc_id = f"doc-{user}"
    text = f"Glaciers move under their own weight; {user} keeps notes on glaciers and volcanoes."
    chunk = Chunk(chunk_id=f"{doc_id}:0", doc_id=doc_id, ordinal=0, text=text, heading_path=["Notes"],
                  page_start=None, page_end=None, char_start=0, char_end=len(text), token_count=14)
    store.add_document(user, DocumentRecord(doc_id, "notes.md", "Notes", None, "md", 0, 1, len(text), [], time.time()),
                       [chunk])


def test_searches_hold_while_new_people_join(tmp_path):
    store = DocumentStore(tmp_path / "documents.sqlite")
    readers = [f"reader-{k}" for k in range(6)]
    for user in readers:
        _document(store, user)
    stop = threading.Event()
    failures: list[str] = []
    searches = [0]

    def read(user: str) -> None:
        while not stop.is_set():
            try:
                assert store.bm25_search(user, "glaciers weight", 5)
                store.term_document_counts(user, ["glaciers", "volcanoes"])
                searches[0] += 1
            except Exception as exc:  # noqa: BLE001 - every failure is the finding
                failures.append(f"{type(exc).__name__}: {exc}")

    def join() -> None:
        for k in range(30):
            _document(store, f"newcomer-{k}")

    threads = [threading.Thread(target=read, args=(u,)) for u in readers]
    for t in threads:
        t.start()
    joiner = threading.Thread(target=join)
    joiner.start()
    joiner.join(60)
    stop.set()
    for t in threads:
        t.join(10)
    assert not failures, failures[:3]
    assert searches[0] > 0
    assert store.term_document_counts("newcomer-29", ["glaciers"])[1] == {"glaciers": 1}
