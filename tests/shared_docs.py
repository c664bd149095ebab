"""The big shared sample documents the `books` tests measure (pytest -m books, `make test-books`).

They sit beside the repository in ../shared/data/docs (CI has them; a fresh clone does not), so the
default run never opens them. A book test whose document is missing fails with one line, never skips:
`make test-books` exists to measure them.
"""
from __future__ import annotations

from pathlib import Path

import pytest

SHARED_DOCS = Path(__file__).resolve().parents[2] / "shared" / "data" / "docs"


def shared_doc(*parts: str) -> Path:
    """The shared document at ../shared/data/docs/<parts>; fails the test in one line when it is missing."""
    path = SHARED_DOCS.joinpath(*parts)
    if not path.is_file():
        pytest.fail(f"{path} is missing: the book tests (make test-books) need ../shared/data/docs beside the "
                    "repository", pytrace=False)
    return path
