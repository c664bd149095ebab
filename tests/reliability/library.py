"""Helpers of the crash and delete tests: a large generated PDF, and what a user's library holds,
counted from every store (SQLite rows, both dense collections, the stored files)."""
from __future__ import annotations

import random
from dataclasses import dataclass, field

from tests.browser.pdfgen import make_pdf

_WORDS = ("glacier river delta basin ridge valley summit crater canyon plateau lagoon estuary moraine "
          "fjord dune marsh meadow forest tundra steppe savanna reef atoll geyser spring").split()


def page_marker(page: int) -> str:
    """A word found on one page only, so a search for it has exactly one right answer."""
    return f"zq{page:03d}marker"


def large_pdf(pages: int = 100, chinese_pages: int = 2) -> bytes:
    """`pages` short English pages (about one chunk each at CHUNK_SIZE=80) and a few Chinese ones (they
    go to the multilingual collection), so ingest has many embedding batches and a conversion long
    enough to be interrupted."""
    rnd = random.Random(7)
    out = []
    for p in range(1, pages + 1):
        lines = [f"# Field notes {p}"]
        for _ in range(4):
            lines.append(f"{page_marker(p)} " + " ".join(rnd.choice(_WORDS) for _ in range(11)) + ".")
        out.append(lines)
    for p in range(chinese_pages):
        out.append([f"# 第{p + 1}章 冰川", "冰川在自身重量的作用下缓慢地向下移动，并磨蚀下面的岩石。",
                    "冰川前缘的测量显示了每个季节冰的流动速度。夏季融水使冰川底部更加湿滑。"])
    return make_pdf(out)


@dataclass
class LibraryState:
    documents: list[str] = field(default_factory=list)      # listed doc ids
    chunks: int = 0                                         # chunk rows of the listed documents
    vectors: int = 0                                        # points in both dense collections
    orphan_vectors: int = 0                                 # points whose doc_id has no row
    files: list[str] = field(default_factory=list)          # entries under DATA_DIR/files/<collection>/
    orphan_files: list[str] = field(default_factory=list)   # ... of no listed document
    pending: int = 0                                        # ingests recorded as in flight
    unsearchable: list[str] = field(default_factory=list)   # listed, yet not found by its own words
    incomplete: list[str] = field(default_factory=list)     # listed, rows or vectors short of its chunks

    def summary(self) -> str:
        return (f"{len(self.documents)} listed, {self.chunks} chunks, {self.vectors} vectors, "
                f"{self.orphan_vectors} orphan vectors, {len(self.orphan_files)} orphan files, "
                f"{self.pending} pending, {len(self.unsearchable)} unsearchable")


def vectors_by_document(tool) -> dict[str, int]:
    """doc_id -> chunks with vectors, over the main and the multilingual collection (windows count once)."""
    counts: dict[str, int] = {}
    for space in tool.dense.spaces:
        for doc_id in tool.vectors.payload_values(space.collection, "doc_id"):
            counts[doc_id] = counts.get(doc_id, 0) + tool.dense.chunks_in(space, doc_id)
    return counts


def found_by_own_words(tool, doc_id: str) -> bool:
    """Both BM25 and dense search find the document by the words of its first chunk."""
    chunks = tool.store.chunks_of(tool.user_id, doc_id)
    if not chunks:
        return False
    query = " ".join(chunks[0].text.split()[:60])
    return all(any(h.chunk.doc_id == doc_id for h in tool.search(query, mode=mode, top_k=5))
               for mode in ("bm25", "dense"))


def library_state(tool) -> LibraryState:
    state = LibraryState()
    listed = tool.list_documents()
    state.documents = [d.doc_id for d in listed]
    per_doc = vectors_by_document(tool)
    state.vectors = sum(per_doc.values())
    state.orphan_vectors = sum(n for d, n in per_doc.items() if d not in state.documents)
    for doc in listed:
        rows = len(tool.store.chunks_of(tool.user_id, doc.doc_id))
        state.chunks += rows
        if rows != doc.chunks or per_doc.get(doc.doc_id, 0) != doc.chunks:
            state.incomplete.append(doc.doc_id)
        if not found_by_own_words(tool, doc.doc_id):
            state.unsearchable.append(doc.doc_id)
    if tool.files_dir.is_dir():
        state.files = sorted(e.name for e in tool.files_dir.iterdir())
    state.orphan_files = [f for f in state.files if f.split(".", 1)[0] not in state.documents]
    state.pending = len(tool.store.pending_ingests(tool.user_id))
    return state


def assert_consistent(state: LibraryState) -> None:
    """What a restart must always find: nothing listed that cannot be searched, nothing stored that is
    not listed."""
    assert state.unsearchable == [] and state.incomplete == [], state
    assert state.orphan_vectors == 0 and state.vectors == state.chunks, state
    assert state.orphan_files == [] and state.pending == 0, state
