"""Figure extraction benchmark: how many captioned figures rag/figures.py finds, and how long it takes.

    python bench/figures.py [PDF ...] [--all-ocr]

Default PDF: Think Python (../shared/data/docs/pdfs_en/thinkpython2.pdf, beside the repository).
For each PDF the extraction runs twice: without OCR, then with OCR as ingest would run it (raster
figures, and drawings without a text layer). `--all-ocr` adds a third run that reads EVERY figure by
OCR, which is what a book of scanned or raster figures costs per figure.

"captions in text" counts the lines of the text layer that read like figure captions ("Figure 3.1: ...",
"图 2-1 ..."; references such as "Figure 3.1 shows" do not count), each label once; "found" is how many
of those labels came back as a figure's label. Seconds are wall-clock (they grow when other programs
share the cores); s/page is over all pages, s/figure over the figures found.
"""
from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pypdfium2 as pdfium  # noqa: E402

from rag import figures  # noqa: E402

THINK_PYTHON = Path(__file__).resolve().parents[2] / "shared" / "data" / "docs" / "pdfs_en" / "thinkpython2.pdf"


def caption_labels(path: Path) -> tuple[int, dict[str, int]]:
    """The page count and the caption labels printed in the text layer ({label: page})."""
    pdf = pdfium.PdfDocument(str(path))
    labels: dict[str, int] = {}
    try:
        for index in range(len(pdf)):
            page = pdf[index]
            textpage = page.get_textpage()
            for line in re.split(r"[\r\n]+", textpage.get_text_range()):
                match = figures._caption_match(" ".join(line.split()))
                if match:
                    labels.setdefault(" ".join(match.group("label").split()), index + 1)
            textpage.close()
            page.close()
        return len(pdf), labels
    finally:
        pdf.close()


def run(path: Path, pages: int, labels: dict[str, int], mode: str) -> None:
    needs_ocr = figures._needs_ocr
    if mode == "all OCR":   # read every figure, whatever its text layer says
        figures._needs_ocr = lambda cand: True
    try:
        started = time.perf_counter()
        found = figures.extract_figures(path, ocr=mode != "no OCR", max_figures=10_000)
        seconds = time.perf_counter() - started
    finally:
        figures._needs_ocr = needs_ocr
    got = {f.label: f.page for f in found if f.label}
    hits = sum(1 for label, page in labels.items() if got.get(label) == page)
    read = sum(f.text_source == "ocr" for f in found)
    kinds = f"{sum(f.kind == 'image' for f in found)} raster / {sum(f.kind == 'vector' for f in found)} vector"
    print(f"  {mode:8s}  {len(found):4d} figures ({kinds}), {hits}/{len(labels)} captioned found, "
          f"{len(found) - len(got)} without a numbered caption, {read} read by OCR | {seconds:6.2f} s, "
          f"{seconds / max(pages, 1):.4f} s/page, {seconds / max(len(found), 1):.3f} s/figure")
    missing = sorted(set(labels) - {label for label in got if got[label] == labels.get(label)})
    if missing and mode == "no OCR":
        print(f"            missed: {', '.join(f'{m} (p. {labels[m]})' for m in missing[:20])}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("pdfs", nargs="*", type=Path, default=[THINK_PYTHON])
    parser.add_argument("--all-ocr", action="store_true", help="also time OCR of every figure")
    args = parser.parse_args()
    for path in args.pdfs:
        if not path.is_file():
            sys.exit(f"missing {path}")
        pages, labels = caption_labels(path)
        print(f"{path.name}: {pages} pages, {len(labels)} captions in text")
        for mode in ["no OCR", "OCR"] + (["all OCR"] if args.all_ocr else []):
            run(path, pages, labels, mode)


if __name__ == "__main__":
    main()
