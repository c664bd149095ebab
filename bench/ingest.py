"""Ingest benchmark: per-stage seconds (convert, chunk, embed, index) for real PDFs, and the ratio of
total ingest time to embedding-only time of the same chunks (target <= 1.25).

    python bench/ingest.py [PDF ...]     (default: Think Python + the largest FinanceBench filing)
"""
from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.settings import Settings  # noqa: E402
from rag.chunk import document_context, embedding_text  # noqa: E402

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"


def default_pdfs() -> list[Path]:
    pdfs = [SHARED / "docs" / "pdfs_en" / "thinkpython2.pdf"]
    filings = sorted((SHARED / "financebench" / "pdfs").glob("*.pdf"), key=lambda p: p.stat().st_size)
    return [p for p in pdfs + filings[-1:] if p.exists()]


def bench(pdf: Path) -> dict:
    with tempfile.TemporaryDirectory(prefix="bench-ingest-") as tmp:
        from rag.tool import RAGTool
        tool = RAGTool("bench", Settings(_env_file=None, data_dir=Path(tmp)))
        tool.embedder.embed(["warm up the model"])          # model load is not ingest time
        started = time.perf_counter()
        result = tool.add_document(pdf)
        total = time.perf_counter() - started
        doc = tool.get_document(result.doc_id)
        texts = [embedding_text(document_context(doc.name, doc.title), c.heading_path, c.text, c.context_prefix) for c in tool.store.chunks_of("bench", result.doc_id)]
        t = time.perf_counter()
        tool.embedder.inner.embed(texts)                     # the raw model, no cache: embedding-only time
        embed_only = time.perf_counter() - t
    stages = {k: round(v, 2) for k, v in result.stage_seconds.items()}
    return {"file": pdf.name, "pages": result.pages, "chunks": result.chunks, "stages_s": stages,
            "total_s": round(total, 2), "embed_only_s": round(embed_only, 2),
            "ratio_total_to_embed": round(total / embed_only, 3)}


def main() -> None:
    pdfs = [Path(p) for p in sys.argv[1:]] or default_pdfs()
    for pdf in pdfs:
        print(json.dumps(bench(pdf)))


if __name__ == "__main__":
    main()
