"""Damaging a store file the ways a disk, a crash or a person does, for the tests of damaged stores
(tests/test_backup.py, tests/reliability/test_damaged_stores.py): real bytes changed in a real file."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from core.errors import StoreDamaged


def damage(path: Path, how: str) -> None:
    if how == "empty":
        os.truncate(path, 0)
    elif how == "half":
        os.truncate(path, path.stat().st_size // 2)
    elif how == "header":
        with open(path, "r+b") as f:
            f.write(b"\x00garbled header!")
    elif how == "pages":                     # the header whole, pages in the middle overwritten
        size = path.stat().st_size
        with open(path, "r+b") as f:
            f.seek(size // 2)
            f.write(os.urandom(3 * 4096))
    elif how == "missing":
        path.unlink()
    else:
        raise ValueError(how)


def refused(use) -> StoreDamaged:
    """The StoreDamaged that `use()` raises (it must raise one)."""
    with pytest.raises(StoreDamaged) as caught:
        use()
    return caught.value
