"""A library of Markdown books for answer tests: the real stores and embedders, no language model."""
from __future__ import annotations

from pathlib import Path

from core.settings import Settings
from rag.tool import RAGTool


def text_library(data_dir: Path, *books: tuple[str, str, str]) -> RAGTool:
    """A RAGTool over its own data folder holding each (text, title, file name) book."""
    tool = RAGTool("learner", Settings(_env_file=None, data_dir=data_dir, llm_backend="none"))
    for text, title, name in books:
        tool.add_text(text, title=title, name=name)
    return tool


def text_hit(text: str, *, heading: tuple[str, ...] = (), page: int = 1, name: str = "book.pdf", n: int = 1):
    """A search hit on one chunk holding `text`, for tests of how an answer is composed from given evidence."""
    from rag.types import Chunk, SearchHit
    chunk = Chunk(doc_id="d", chunk_id=f"d:{n}", ordinal=n, text=text, heading_path=list(heading), page_start=page,
                  page_end=page, char_start=0, char_end=len(text), token_count=len(text.split()))
    return SearchHit(chunk=chunk, doc_name=name, doc_title=name.rsplit(".", 1)[0], score=1.0, rank=n)
