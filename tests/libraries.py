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
