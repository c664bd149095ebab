"""Delete means gone: a deleted document leaves no row, BM25 entry, vector (main or multilingual), stored
file, OCR sidecar, figure, cached embedding or quoting memory; a crash midway leaves only orphans that
the next start removes; that pass never touches an ingest still in flight.
"""
from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from core.errors import DocumentError
from core.settings import Settings
from core.vectors import close_vector_store
from rag.dense import EMBED_BATCH
from rag.reconcile import reconcile
from rag.tool import RAGTool
from tests.browser.pdfgen import COOKING, STUDY, make_pdf
from tests.reliability.library import assert_consistent, library_state, vectors_by_document
from tests.test_figures import build_pdf


def write(folder: Path, name: str, data: bytes) -> Path:
    path = folder / name
    path.write_bytes(data)
    return path


def cached_rows(tool: RAGTool, texts: list[str]) -> int:
    """Rows of the embedding cache (EMBEDDING_CACHE) holding any of these texts, in any space."""
    keys = [tool.embedder._key(t, kind) for t in texts for kind in ("document", "query")]
    with sqlite3.connect(tool.settings.embedding_cache or tool.settings.data_dir / "embedding_cache.sqlite") as db:
        return sum(db.execute(f"SELECT COUNT(*) FROM embedding_cache WHERE hash IN ({','.join('?' * len(part))})",
                              part).fetchone()[0]
                   for part in (keys[i:i + 500] for i in range(0, len(keys), 500)))


def stored_for(tool: RAGTool, doc_id: str) -> list[str]:
    return sorted(e.name for e in tool.files_dir.iterdir() if e.name.startswith(doc_id)) if tool.files_dir.is_dir() else []


@pytest.mark.slow
def test_a_deleted_document_leaves_nothing_behind(settings, tmp_path, reliability):
    from assistant.facade import PDFLearningAssistant
    a = PDFLearningAssistant("alice", settings)
    glaciers = a.load_document(write(tmp_path, "glaciers.pdf", build_pdf()))      # figures + a scanned page
    study = a.load_document(write(tmp_path, "study.pdf", make_pdf(STUDY)))         # English and Chinese pages
    kept = a.load_document(write(tmp_path, "bread.pdf", make_pdf(COOKING)))
    asked = a.ask_once("How fast does the glacier ice flow each season?")
    citation = next(c for c in asked.citations if c.doc_id == glaciers.doc_id)

    records = {d: a.rag.get_document(d) for d in (glaciers.doc_id, study.doc_id)}
    texts = {d: a.rag._embedded_texts(r) for d, r in records.items()}
    before = {"files": {d: stored_for(a.rag, d) for d in records}, "vectors": vectors_by_document(a.rag),
              "cache": {d: cached_rows(a.rag, t) for d, t in texts.items()},
              "figures": len([m for m in a.memory.list(["perceptual"]) if m.metadata.get("doc_id") == glaciers.doc_id])}
    assert {".pdf", ".pdf.ocr.json", ".figures"} <= {n[24:] for n in before["files"][glaciers.doc_id]}
    multilingual = a.rag.dense.multilingual.collection
    assert a.rag.vectors.count(multilingual, where={"doc_id": study.doc_id}) > 0
    assert all(before["cache"].values()) and before["figures"] == 3

    for doc_id in records:
        assert a.delete_document(doc_id) is True

    for doc_id in records:
        assert a.rag.get_document(doc_id) is None and a.rag.store.chunks_of("alice", doc_id) == []
        assert stored_for(a.rag, doc_id) == [] and doc_id not in vectors_by_document(a.rag)
        assert cached_rows(a.rag, texts[doc_id]) == 0
    assert a.rag.store.bm25_search("alice", "glacier tuple recursion 支持向量机", 50) == []
    quoting = [m for m in a.memory.list(["episodic", "semantic"])
               if any(c.get("doc_id") == glaciers.doc_id for c in m.metadata.get("citations") or [])]
    remembered = next(m for m in a.memory.list(["episodic"]) if m.metadata.get("question") == asked.question)
    figures_left = [m for m in a.memory.list(["perceptual"]) if m.metadata.get("doc_id") == glaciers.doc_id]
    assert quoting == [] and figures_left == []
    assert "Measurements at the front" not in remembered.content and remembered.metadata["answer"] == ""
    assert asked.question in remembered.content
    with pytest.raises(DocumentError, match="removed"):
        a.render_source(citation)
    state = library_state(a.rag)
    assert_consistent(state)
    assert state.documents == [kept.doc_id]

    vectors = sum(before["vectors"][d] for d in records)
    files = sum(len(f) for f in before["files"].values())
    reliability.record("Isolation and access", "delete two PDFs: one with figures and a scanned page, one with "
                       "Chinese pages",
                       f"removed {vectors} vectors (both collections), {files} stored files/folders (PDF, OCR "
                       f"sidecar, figures), {sum(before['cache'].values())} cached embeddings, "
                       f"{before['figures']} figure memories; the answer that quoted it keeps only its question; "
                       f"its page view says it was removed; the other document: {state.summary()}")


def test_a_crash_after_a_delete_s_rows_is_cleaned_at_restart(settings, tmp_path, reliability):
    """The state a crash right after the delete's one transaction leaves: rows gone, vectors and files not
    yet (made with the store's own delete, the first step of RAGTool.remove_document)."""
    tool = RAGTool("bob", settings)
    doc = tool.add_document(write(tmp_path, "study.pdf", make_pdf(STUDY)))
    assert all(tool.vectors.count(space.collection) for space in tool.dense.spaces)   # main and multilingual
    assert tool.store.remove_document("bob", doc.doc_id)

    assert tool.list_documents() == [] and tool.search("支持向量机 最大间隔 超平面", top_k=5) == []
    close_vector_store(settings)                           # the restart
    restarted = RAGTool("bob", settings)
    report = restarted.reconciled
    state = library_state(restarted)
    assert report.vectors == doc.chunks and report.files == 1 and report.doc_ids == [doc.doc_id]
    assert_consistent(state)
    assert state.vectors == 0 and state.files == []
    reliability.record("Crash", "crash after a delete's rows commit, before its vectors and file go",
                       f"not listed nor found meanwhile; restart removed {report.vectors} orphan vectors (main "
                       f"and multilingual) and {report.files} orphan file; then {state.summary()}")


def test_reconcile_keeps_an_ingest_in_flight(tmp_path, reliability):
    settings = Settings(_env_file=None, data_dir=tmp_path / "data", llm_backend="none", chunk_size=40,
                        chunk_overlap=5, multilingual_embedding_model="none")
    tool = RAGTool("carol", settings)
    notes = tmp_path / "stations.md"
    notes.write_text("\n\n".join(f"## Station {i}\n\nThe survey station st{i:03d}x measured the moraine and the "
                                 "fjord ice. The crew logged the snow depth, the wind and the temperature."
                                 for i in range(80)), encoding="utf-8")
    first_batch, go_on = threading.Event(), threading.Event()
    results: list = []

    def hold(stage: str, done: int, total: int) -> None:
        if stage == "embed" and not first_batch.is_set():
            first_batch.set()
            go_on.wait(timeout=300)

    ingest = threading.Thread(target=lambda: results.append(tool.add_document(notes, progress=hold)))
    ingest.start()
    assert first_batch.wait(timeout=300)
    in_flight = sum(vectors_by_document(tool).values())
    report = reconcile(tool.store, tool.dense, tool.files_dir, "carol")
    still = sum(vectors_by_document(tool).values())
    files = sorted(e.name for e in tool.files_dir.iterdir())
    go_on.set()
    ingest.join()
    state = library_state(tool)
    assert report.clean and still == in_flight >= EMBED_BATCH and len(files) == 1   # a first batch landed
    assert_consistent(state)
    assert state.documents == [results[0].doc_id]
    reliability.record("Crash", "reconcile while an ingest is in flight (same process)",
                       f"kept its {in_flight} vectors and stored file (removed {report.vectors} vectors, "
                       f"{report.files} files); the ingest then finished: {state.summary()}")
