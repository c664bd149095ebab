"""Guide benchmark: how long a document's study guide (assistant.guide) takes to open, no model.

A generated textbook (N chapters of three sections, each defining two made-up terms) is added as Markdown, then
its guide is opened three times:
- first: every chapter's digest made and every suggested question asked (the one slow open);
- again: the same process (digests cached in memory, checked questions in the store);
- after a restart: the in-process caches emptied, as in a new process: digests made again, questions read
  from the store — what "opening the guide of an already-summarized document" costs.

    python bench/guide.py [--chapters 30] [--document PATH]

--document measures a real book instead (e.g. ../shared/data/docs/pdfs_en/thinkpython2.pdf, 244 pages).
"""
from __future__ import annotations

import argparse
import itertools
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.settings import Settings  # noqa: E402

SYLLABLES = ["ka", "lo", "mi", "ne", "pu", "ra", "si", "to", "vu", "ze", "bo", "da"]
KINDS = ["structure", "procedure", "measure", "container", "signal", "pattern"]
USES = ["stores ordered records", "checks a result before it is used", "counts how often an event happens",
        "joins two tables by a shared key", "splits a task into smaller steps", "keeps a value between calls"]


def made_up_terms():
    """Distinct invented words ("kalomi", "kalone", …): each defined once in the book, so each has one answer."""
    for a, b, c in itertools.product(SYLLABLES, repeat=3):
        if len({a, b, c}) == 3:
            yield a + b + c


def textbook(chapters: int) -> str:
    terms = made_up_terms()
    lines = ["# A generated textbook", ""]
    for ch in range(1, chapters + 1):
        lines += [f"## Chapter {ch} Topic {ch}", "", f"This chapter introduces the ideas of topic {ch}.", ""]
        for sec in range(1, 4):
            x, y = next(terms), next(terms)
            kind, use = KINDS[(ch + sec) % len(KINDS)], USES[(ch * 3 + sec) % len(USES)]
            lines += [f"### {ch}.{sec} The {x} and the {y}", "",
                      f"A {x} is a {kind} that {use}. A {y} is a {kind} that {USES[(ch + sec) % len(USES)]}.",
                      f"Unlike a {y}, a {x} is rebuilt whenever its input changes, so it never holds stale data.",
                      f"In practice a {x} is combined with a {y} when a program needs both behaviours at once.", ""]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chapters", type=int, default=30)
    parser.add_argument("--document", type=Path, help="a real document to open the guide of")
    args = parser.parse_args()

    import rag.tool as tool_module
    from assistant.guide import guide_stages
    from rag.tool import RAGTool

    settings = Settings(_env_file=None, data_dir=Path(tempfile.mkdtemp(prefix="bench-guide-")) / "data",
                        llm_backend="none")
    rag = RAGTool("bench", settings)
    started = time.perf_counter()
    if args.document:
        doc = rag.add_document(args.document)
        print(f"ingest: {doc.name}, {doc.pages} pages, {doc.chunks} passages in {time.perf_counter() - started:.1f} s")
        rag.ask("What is this document about?")     # the models loaded before anything is timed
    else:
        doc = rag.add_text(textbook(args.chapters), title="A generated textbook", name="generated.md")
        print(f"ingest: {args.chapters} chapters, {doc.chunks} passages in {time.perf_counter() - started:.1f} s")
        rag.ask("What is a kalomi?")            # the models loaded before anything is timed

    def opened(label: str):
        t0 = time.perf_counter()
        shown = None
        for guide in guide_stages(rag, doc.doc_id):      # the first stage is what the person sees first
            shown = shown or time.perf_counter() - t0
        seconds = time.perf_counter() - t0
        questions = sum(len(c.questions) for c in guide.chapters)
        print(f"{label:<22} {seconds * 1000:9.1f} ms (outline and summaries shown at {shown * 1000:.1f} ms)   "
              f"chapters {len(guide.chapters)}, questions kept {questions}")
        return guide

    guide = opened("first open")
    opened("again (same process)")
    with tool_module._outlines_lock:
        tool_module._outlines.clear()         # the digests are kept with the outlines
    opened("after a restart")
    fewer = [c.title for c in guide.chapters if len(c.questions) < 3]
    print(f"chapters with fewer than 3 questions: {len(fewer)} {fewer[:5]}")


if __name__ == "__main__":
    main()
