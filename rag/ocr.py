"""OCR for PDF pages that are pictures (scans), fully offline.

RapidOCR runs the PP-OCR text detection and recognition ONNX models that ship inside its wheel
(Chinese and English in one model). The model is loaded once per process, on first use, from the
wheel's own files: given explicit model paths RapidOCR never tries to download anything. Its angle
classifier stays off: on upright pages it flips English lines upside down into garbage
(LOCAL_MODELS.md, "OCR").

`ocr_page` takes a page image rendered by the caller (PDFium is not thread-safe, so rendering happens
under the caller's lock and the slow recognition here runs outside it) and returns the page's lines
in reading order (columns one after another), each with its text, confidence and box in PDF points.
Boxes use PDFium's text-rectangle convention: (left, bottom, right, top), origin at the bottom
left of the page as displayed, so `assistant/pages.py` draws them exactly like text-layer boxes.

`save_ocr_lines` / `load_ocr_lines` keep those lines in a JSON file beside the stored PDF, so the page
viewer can highlight passages on scanned pages without running OCR again.
"""
from __future__ import annotations

import json
import logging
import math
import os
import re
import statistics
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core.text import CJK_CHAR

log = logging.getLogger(__name__)

# --- tuning knobs (measured with bench/ocr.py on 7-12 pt English and Chinese, clean and scanned) ----
RENDER_DPI = 200             # as accurate as 300 dpi; recognition reads 48-px-high line crops either way
MAX_RENDER_SIDE = 2400       # px: a poster-sized page is rendered smaller instead of at 9,000 px
DETECT_SIDE = 1280           # px: lines are found on a copy this size (3-4x faster than full size, same lines)
MIN_LINE_CONFIDENCE = 0.65   # below this a "line" is picture texture or a stain read as letters
PARAGRAPH_GAP_RATIO = 1.45   # as in the text-layer reader: a gap this much above the line pitch = new paragraph
INDENT_PITCHES = 0.4         # a line indented this many line pitches past its neighbours starts a paragraph
SHORT_LINE_SHARE = 0.18      # a line ending this share of a line's width before its neighbours ends a paragraph
MIN_COLUMN_LINES = 3         # a column has at least this many lines on each side of its gutter
GUTTER_EMS = 0.8             # a gutter between columns is at least this many line heights wide
COLUMN_LINE_HEIGHTS = 6      # a column's lines are at least this many line heights long (table cells are shorter)
SIDECAR_SUFFIX = ".ocr.json"

# The models of rapidocr 3.10's default configuration (PP-OCRv6 small, Chinese + English), in its wheel.
DET_MODEL = "PP-OCRv6_det_small.onnx"
REC_MODEL = "PP-OCRv6_rec_small.onnx"

_ALNUM = re.compile(r"[^\W_]")


class OcrUnavailable(Exception):
    """The OCR model cannot be loaded here (package or model files missing)."""


@dataclass
class OcrLine:
    """One line of text found on a page image."""
    text: str
    box: tuple[float, float, float, float]   # left, bottom, right, top in PDF points (origin bottom left)
    conf: float                              # recognition confidence 0-1
    para_break: bool = False                 # a paragraph (or a column) starts with this line

    def as_dict(self) -> dict:
        return {"text": self.text, "box": [round(v, 2) for v in self.box], "conf": round(self.conf, 3)}


@dataclass
class _Box:
    """A detected line in image pixels (y grows downwards), while reading order is worked out."""
    text: str
    x0: float
    y0: float
    x1: float
    y1: float
    conf: float
    para_break: bool = False

    @property
    def height(self) -> float:
        return self.y1 - self.y0

    @property
    def center_y(self) -> float:
        return (self.y0 + self.y1) / 2


# --- the model ----------------------------------------------------------------------------------------

_engine = None
_engine_lock = threading.Lock()
# One page at a time: the model already uses every core, so two pages at once only double the memory.
_run_lock = threading.Lock()


def model_files() -> tuple[Path, Path]:
    """The detection and recognition model files inside the installed rapidocr wheel."""
    try:
        import rapidocr
    except ImportError as exc:
        raise OcrUnavailable("the rapidocr package is not installed") from exc
    models = Path(rapidocr.__file__).resolve().parent / "models"
    return models / DET_MODEL, models / REC_MODEL


def _load_engine():
    det, rec = model_files()
    missing = [p.name for p in (det, rec) if not p.is_file()]
    if missing:
        raise OcrUnavailable(f"OCR model files missing from the rapidocr package: {', '.join(missing)}")
    from rapidocr import RapidOCR
    params = {
        "Global.use_cls": False,
        "Global.log_level": "error",     # "no text found" on a blank scan is not a problem
        "Global.max_side_len": MAX_RENDER_SIDE,   # we size the image; RapidOCR must not shrink it again
        "Det.model_path": str(det),               # explicit paths: RapidOCR downloads only when none is given
        "Rec.model_path": str(rec),
        "Det.limit_type": "max",
        "Det.limit_side_len": DETECT_SIDE,
    }
    try:
        engine = RapidOCR(params=params)
    except Exception as exc:  # noqa: BLE001 - onnxruntime / config errors of any kind
        raise OcrUnavailable(f"the OCR model could not be loaded: {exc}") from exc
    log.info("OCR model loaded (%s, %s)", det.name, rec.name)
    return engine


def ocr_engine():
    """The process's one RapidOCR instance, loaded on first use. Raises OcrUnavailable."""
    global _engine
    if _engine is None:
        with _engine_lock:
            if _engine is None:
                _engine = _load_engine()
    return _engine


def render_scale(width_pt: float, height_pt: float) -> float:
    """Pixels per PDF point to render a page at for OCR: RENDER_DPI, smaller for very large pages."""
    longest = max(width_pt, height_pt, 1.0)
    return min(RENDER_DPI / 72.0, MAX_RENDER_SIDE / longest)


# --- a page -------------------------------------------------------------------------------------------

def ocr_page(image: np.ndarray, scale: float) -> list[OcrLine]:
    """The confident text lines of a rendered page, in reading order.

    `image` is the page rendered at `scale` pixels per point (H x W x 3, BGR as PDFium renders it,
    or grey). Boxes come back in PDF points of the page as displayed, origin at the bottom left.
    """
    engine = ocr_engine()
    with _run_lock:
        result = engine(image)
    boxes = _confident_boxes(result)
    height_pt = image.shape[0] / scale
    return [OcrLine(text=b.text, conf=b.conf, para_break=b.para_break,
                    box=(b.x0 / scale, height_pt - b.y1 / scale, b.x1 / scale, height_pt - b.y0 / scale))
            for b in reading_order(boxes)]


def _confident_boxes(result) -> list[_Box]:
    quads, texts, scores = (getattr(result, name, None) for name in ("boxes", "txts", "scores"))
    if quads is None or not texts:
        return []
    out = []
    for quad, text, conf in zip(quads, texts, scores):
        text = " ".join(str(text).split())
        if float(conf) < MIN_LINE_CONFIDENCE or not _ALNUM.search(text):
            continue
        quad = np.asarray(quad, dtype=float)
        out.append(_Box(text, float(quad[:, 0].min()), float(quad[:, 1].min()),
                        float(quad[:, 0].max()), float(quad[:, 1].max()), float(conf)))
    return out


# --- reading order --------------------------------------------------------------------------------------

def reading_order(boxes: list[_Box]) -> list[_Box]:
    """Lines as a person reads them: column by column, rows merged, paragraph starts marked.

    The detector returns lines top to bottom across the whole page, which interleaves the lines of
    side-by-side columns. Where a clear vertical gutter splits the lines into two stacks of text, each
    stack is read on its own (recursively, for three columns); lines that cross the gutter (a title,
    a full-width paragraph) are read where they sit between the column sections.
    """
    ordered = _order(boxes)
    if ordered:
        ordered[0].para_break = True
    return ordered


def _order(boxes: list[_Box]) -> list[_Box]:
    gutter = _find_gutter(boxes) if len(boxes) >= 2 * MIN_COLUMN_LINES else None
    if gutter is None:
        return _rows(boxes)
    out: list[_Box] = []
    columns: list[_Box] = []
    spanning: list[_Box] = []
    for box in sorted(boxes, key=lambda b: b.y0):
        crosses = box.x0 < gutter < box.x1
        if crosses and columns:
            out += _read_columns(columns, gutter)
            columns = []
        elif not crosses and spanning:
            out += _mark_first(_rows(spanning))
            spanning = []
        (spanning if crosses else columns).append(box)
    out += _read_columns(columns, gutter) + _mark_first(_rows(spanning))
    return out


def _read_columns(boxes: list[_Box], gutter: float) -> list[_Box]:
    left = [b for b in boxes if b.x1 <= gutter]
    right = [b for b in boxes if b.x0 >= gutter]
    return _mark_first(_order(left)) + _mark_first(_order(right))


def _mark_first(lines: list[_Box]) -> list[_Box]:
    if lines:
        lines[0].para_break = True
    return lines


def _find_gutter(boxes: list[_Box]) -> float | None:
    """The x of a vertical gap that separates two side-by-side columns of text lines, or None."""
    x_min = min(b.x0 for b in boxes)
    x_max = max(b.x1 for b in boxes)
    width = int(math.ceil(x_max - x_min)) + 1
    line_height = statistics.median(b.height for b in boxes)
    if width < 4 * line_height:
        return None
    # How many lines cover each pixel column; a gutter is a wide run that (almost) none cover.
    coverage = np.zeros(width + 1, dtype=int)
    for b in boxes:
        coverage[int(b.x0 - x_min)] += 1
        coverage[int(math.ceil(b.x1 - x_min))] -= 1
    coverage = np.cumsum(coverage)[:width]
    lo, hi = int(0.2 * width), int(0.8 * width)
    middle = coverage[lo:hi]
    crossing = int(middle.min())
    if crossing > 0.2 * len(boxes):     # many lines run across: one column of text
        return None
    free = middle <= crossing
    best_start = best_len = i = 0
    while i < len(free):          # the widest run of free pixel columns
        j = i
        while j < len(free) and free[j]:
            j += 1
        if j - i > best_len:
            best_start, best_len = i, j - i
        i = j + 1
    if best_len < GUTTER_EMS * line_height:
        return None
    gutter = x_min + lo + best_start + best_len / 2
    left = [b for b in boxes if b.x1 <= gutter]
    right = [b for b in boxes if b.x0 >= gutter]
    if len(left) < MIN_COLUMN_LINES or len(right) < MIN_COLUMN_LINES:
        return None
    # Columns stand side by side: their lines share most of their height...
    overlap = min(max(b.y1 for b in left), max(b.y1 for b in right)) - max(min(b.y0 for b in left),
                                                                          min(b.y0 for b in right))
    extent = min(max(b.y1 for b in side) - min(b.y0 for b in side) for side in (left, right))
    if overlap < 0.5 * extent:
        return None
    # ...and are text: long lines that fill their column. Table cells are short, and a table reads by rows.
    for side in (left, right):
        span = max(b.x1 for b in side) - min(b.x0 for b in side)
        length = statistics.median(b.x1 - b.x0 for b in side)
        if length < 0.5 * span or length < COLUMN_LINE_HEIGHTS * line_height:
            return None
    return gutter


def _rows(boxes: list[_Box]) -> list[_Box]:
    """One column's boxes as text lines top to bottom: boxes on one row are joined left to right."""
    rows: list[list[_Box]] = []
    for box in sorted(boxes, key=lambda b: b.center_y):
        if rows:
            row = rows[-1]
            row_center = statistics.fmean(b.center_y for b in row)
            if abs(box.center_y - row_center) <= 0.5 * min(box.height, max(b.height for b in row)):
                row.append(box)
                continue
        rows.append([box])
    lines = [_join_row(sorted(row, key=lambda b: b.x0)) for row in rows]
    _mark_paragraphs(lines)
    return lines


def _join_row(row: list[_Box]) -> _Box:
    if len(row) == 1:
        return row[0]
    text = row[0].text
    for box in row[1:]:
        both_cjk = CJK_CHAR.match(text[-1]) and CJK_CHAR.match(box.text[0])
        text += ("" if both_cjk else " ") + box.text
    chars = sum(len(b.text) for b in row)
    conf = sum(b.conf * len(b.text) for b in row) / chars
    return _Box(text, min(b.x0 for b in row), min(b.y0 for b in row), max(b.x1 for b in row),
                max(b.y1 for b in row), conf)


def _mark_paragraphs(lines: list[_Box]) -> None:
    """A paragraph starts after a clearly larger gap, at an indented first line, or after a short line.

    Indents and short lines are judged against the neighbouring lines, not the column's margin: a
    scan is often slightly skewed, so its margins drift by more than an indent over a page.
    """
    if len(lines) < 2:
        return
    steps = [b.y0 - a.y0 for a, b in zip(lines, lines[1:])
             if 0 < b.y0 - a.y0 < 3 * max(a.height, b.height)]
    pitch = statistics.median(steps) if steps else statistics.median(b.height for b in lines)
    width = statistics.median(b.x1 - b.x0 for b in lines)
    for k in range(1, len(lines)):
        a, b = lines[k - 1], lines[k]
        after = lines[k + 1] if k + 1 < len(lines) else None
        before = lines[k - 2] if k >= 2 else None
        gap = b.y0 - a.y0 > PARAGRAPH_GAP_RATIO * pitch
        indent, shortfall = INDENT_PITCHES * pitch, SHORT_LINE_SHARE * width
        indented = b.x0 - a.x0 > indent and (after is None or b.x0 - after.x0 > indent)
        short = b.x1 - a.x1 > shortfall and (before is None or before.x1 - a.x1 > shortfall)
        if gap or indented or short:
            b.para_break = True


# --- the sidecar beside a stored PDF ---------------------------------------------------------------------

def sidecar_path(pdf_path: str | Path) -> Path:
    """Where the OCR lines of the PDF at `pdf_path` are kept: `<pdf path>.ocr.json`."""
    return Path(f"{pdf_path}{SIDECAR_SUFFIX}")


def save_ocr_lines(pdf_path: str | Path, ocr_lines: dict[int, list[dict]]) -> Path | None:
    """Write the OCR lines ({page: [{"text", "box", "conf"}]}) beside the stored PDF.

    Nothing to write removes an old sidecar (the same name may have held another document's lines).
    Returns the sidecar's path, or None when there is none.
    """
    path = sidecar_path(pdf_path)
    if not ocr_lines:
        path.unlink(missing_ok=True)
        return None
    payload = {"version": 1, "pages": {str(page): lines for page, lines in sorted(ocr_lines.items())}}
    # Write then rename, so a reader never sees half a file.
    fd, tmp = tempfile.mkstemp(prefix=path.name, suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(payload, fh, ensure_ascii=False)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def load_ocr_lines(pdf_path: str | Path) -> dict[int, list[dict]]:
    """The OCR lines saved beside the PDF, {page: [{"text", "box", "conf"}]}; {} when there are none."""
    path = sidecar_path(pdf_path)
    if not path.is_file():
        return {}
    try:
        pages = json.loads(path.read_text(encoding="utf-8")).get("pages", {})
        return {int(page): [{"text": str(line["text"]), "box": [float(v) for v in line["box"]][:4],
                             "conf": float(line.get("conf", 0.0))} for line in lines]
                for page, lines in pages.items()}
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        log.warning("Ignoring the unreadable OCR sidecar %s", path, exc_info=True)
        return {}


def remove_ocr_lines(pdf_path: str | Path) -> None:
    """Delete the sidecar of a stored PDF (when the document is deleted)."""
    sidecar_path(pdf_path).unlink(missing_ok=True)
