"""A burst of note writes for the kill -9 test: `python -m tests.reliability.note_writer USER COUNT`.

Adds COUNT semantic notes through MemoryTool, one at a time, and prints each note's id (and its text's
marker) only after the add returned: a printed id is a committed note.
"""
from __future__ import annotations

import sys

from core.settings import get_settings
from memory.tool import MemoryTool


def note_text(n: int) -> str:
    return f"Note {n}: the glacier survey station nq{n:04d}tag measured the ice flow again today."


def main(user: str, count: int) -> int:
    tool = MemoryTool(user, get_settings())
    print("ready", flush=True)
    for n in range(count):
        result = tool.execute("add", content=note_text(n), memory_type="semantic", importance=0.8,
                              metadata={"kind": "note"})
        if not result.ok:
            print(f"failed {n}: {result}", file=sys.stderr, flush=True)
            return 1
        print(f"added {n} {result.data.id}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], int(sys.argv[2])))
