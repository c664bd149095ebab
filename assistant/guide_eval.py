"""How complete the study guides of a folder of documents are, and a question set made of their suggestions.

    python -m assistant.guide_eval DOCS OUT [--embedding-cache FILE]

Adds every document of DOCS (a folder of documents, or an evaluation folder holding docs/) to a fresh library
with no model, as the Documents tab does, opens each document's guide (assistant.guide) and prints one JSON line
per document, then, as its LAST line, one JSON object over all of them:
- section_coverage: of the chapters' sections (not exercises, glossaries or references), the share whose
  title the chapter's summary shows with at least one cited sentence of the book;
- chapters, chapters_without_summary, sections, terms, questions (suggested, each already checked by asking
  it with no model), guide_s (the first open of every guide, questions checked).
It writes OUT/docs (links to the documents) and OUT/questions.jsonl: every suggested question with its document
and its chapter's first page as gold, for `python -m rag.eval OUT --answers --llm local`, which says how many
of them the default model refuses (refused_answerable).
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from pathlib import Path

from assistant.guide import DocumentGuide, GuideChapter
from rag.eval_sets import documents_of, link_documents
from rag.outline import heading_text
from rag.summary import skipped_section

_CITED = re.compile(r"\[\d+\]")
_LICENCE = re.compile(r".*licen[cs]e", re.IGNORECASE)      # a book's licence file beside it has no guide


def section_shown(chapter: GuideChapter, title: str) -> bool:
    """The chapter summary's line for the section titled so holds a cited sentence."""
    name = heading_text(title)
    return any(name in line and _CITED.search(line) for line in chapter.summary.splitlines())


def coverage(guide: DocumentGuide) -> dict:
    sections = [(c, s) for c in guide.chapters for s in c.sections if not skipped_section(s.title)]
    missing = [s.title for c, s in sections if not section_shown(c, s.title)]
    shown = len(sections) - len(missing)
    return {"doc": guide.name, "language": guide.language, "chapters": len(guide.chapters),
            "chapters_without_summary": sum(1 for c in guide.chapters if not _CITED.search(c.summary)),
            "sections": len(sections), "sections_shown": shown,
            "section_coverage": round(shown / len(sections), 4) if sections else None,
            "terms": sum(len(c.terms) for c in guide.chapters),
            "questions": sum(len(c.questions or []) for c in guide.chapters), "missing": missing[:10]}


def question_rows(guide: DocumentGuide) -> list[dict]:
    rows = []
    for i, chapter in enumerate(guide.chapters):
        gold = {"doc": guide.name, **({"page": chapter.page_start} if chapter.page_start else {})}
        for k, question in enumerate(chapter.questions or []):
            rows.append({"id": f"{Path(guide.name).stem[:20]}-{i + 1}-{k + 1}", "question": question,
                         "lang": guide.language, "chapter": chapter.title, "gold": [gold]})
    return rows


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(prog="python -m assistant.guide_eval", description=__doc__.split("\n")[0])
    parser.add_argument("docs", type=Path, help="a folder of documents, or an evaluation folder holding docs/")
    parser.add_argument("out", type=Path, help="where docs/ and questions.jsonl are written")
    parser.add_argument("--embedding-cache", type=Path, metavar="FILE")
    args = parser.parse_args(argv)
    from assistant import PDFLearningAssistant
    from assistant.guide import document_guide
    from core.errors import AssistantError
    from core.settings import Settings

    docs = [p for p in documents_of(args.docs) if not _LICENCE.match(p.stem)]
    link_documents(docs, args.out / "docs")
    with tempfile.TemporaryDirectory(prefix="guide-eval-") as tmp:
        overrides = {"_env_file": None, "data_dir": Path(tmp) / "data", "llm_backend": "none"}
        if args.embedding_cache:
            overrides["embedding_cache"] = args.embedding_cache.resolve()
        assistant = PDFLearningAssistant("eval", Settings(**overrides))
        per_doc, questions, seconds = [], [], 0.0
        for path in docs:
            try:
                loaded = assistant.load_document(path)
            except AssistantError as exc:
                print(f"skipped {path.name}: {exc}", file=sys.stderr)
                continue
            started = time.perf_counter()
            guide = document_guide(assistant.rag, loaded.doc_id)
            seconds += time.perf_counter() - started
            figures = coverage(guide)
            print(json.dumps(figures, ensure_ascii=False), flush=True)
            per_doc.append(figures)
            questions += question_rows(guide)
    (args.out / "questions.jsonl").write_text("".join(json.dumps(q, ensure_ascii=False) + "\n" for q in questions),
                                              encoding="utf-8")
    sections = sum(d["sections"] for d in per_doc)
    total = {"docs": len(per_doc), "chapters": sum(d["chapters"] for d in per_doc),
             "chapters_without_summary": sum(d["chapters_without_summary"] for d in per_doc),
             "sections": sections,
             "section_coverage": round(sum(d["sections_shown"] for d in per_doc) / sections, 4) if sections else None,
             "terms": sum(d["terms"] for d in per_doc), "questions": len(questions),
             "guide_s": round(seconds, 1), "out": str(args.out)}
    print(json.dumps(total, ensure_ascii=False))
    return total


if __name__ == "__main__":
    main()
