"""Figures inside PDFs: found, captioned, cut out as PNGs and read, so they can be searched and shown.

`extract_figures` returns the figures of a PDF in page order. A figure is
- a raster image (an image object, also inside form XObjects), or
- a vector drawing: a cluster of path / form / shading objects (Think Python's diagrams, plots), kept
  when a caption line ("Figure 3.2", "Fig. 4", "图 2-1") sits next to it, or when it is large and
  not a box around text (code listings, tables and call-outs are paths around text, not figures).
Each comes with its page (1-based), its box in PDF points (left, bottom, right, top, origin bottom
left: PDFium's text-rectangle convention, as the page viewer and rag/ocr.py use), its caption (the
nearest caption-pattern line below or above it, with the lines it wraps onto; else a "Figure N" line
read by OCR at the top or bottom of the picture; else the nearest short stand-alone line; else ""),
the words inside it (the text layer's for drawings, OCR for raster figures and for drawings without
a text layer) and a PNG of the page region rendered at FIGURE_DPI, which shows drawings and images
alike, with whatever is drawn on top of them. A drawing's box takes in its labels (tick labels, axis
titles); sub-figures in a grid with only "(a)", "(b)" labels between them are one figure.

Skipped as decoration: images under about an inch, anything covering most of the page (backgrounds,
page frames, the page image of a scan: scanned pages are read as text by rag/ocr.py, so a page with
no visible text layer gives no figures), the same image on RUNNING_MIN_PAGES or more pages (logos),
and uncaptioned drawings repeated at the same place on as many pages (ornaments, header bars).

PDFium is not thread-safe: every call into it holds rag.pdf_converter.PDFIUM_LOCK, taken page by page
so other people's documents and page views are not held up. OCR never runs under the lock (seconds a
figure); it uses rag.ocr's one model per process.

`save_figures` / `load_figures` keep the PNGs and a JSON index in a folder beside the stored PDF
(`figures_dir`), and `figure_memory_text` / `memory_records` turn them into perceptual memories.
"""
from __future__ import annotations

import ctypes
import hashlib
import io
import json
import logging
import os
import re
import shutil
import tempfile
import time
import unicodedata
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from core.errors import DocumentError
from rag import ocr as rag_ocr
from rag.pdf_converter import PDFIUM_LOCK, utf16_offsets

log = logging.getLogger(__name__)

# progress(stage, done, total): ("figures", i, n) per page looked at, ("figure-images", k, m) per figure cut out.
Progress = Callable[[str, int, int], None]
Box = tuple[float, float, float, float]   # left, bottom, right, top in PDF points

# --- tuning knobs (measured with bench/figures.py on Think Python, the pumpkin book and the shared scans) ---
FIGURE_DPI = 150              # the stored PNG: sharp enough to read a diagram's labels on screen
MAX_PNG_SIDE = 2000           # px: a poster-sized figure is stored smaller
MIN_IMAGE_SIDE_PT = 72        # an image under an inch on both sides is an icon, bullet or logo
MIN_THIN_SIDE_PT = 8          # ... and one thinner than this is a rule or a bar
MIN_VECTOR_SIDE_PT = 18       # a drawing's smaller side (Think Python's slice diagram is 156 x 40 pt)
MIN_CAPTIONED_LONG_PT = 36    # ... and its longer side (Think Python's Figure 7.1 is 48 x 33 pt)
MIN_UNCAPTIONED_SIDE_PT = 36  # a drawing with no caption must be bigger: half an inch by ...
MIN_UNCAPTIONED_LONG_PT = 72  # ... an inch
MAX_PAGE_SHARE = 0.7          # covering this share of the page: a background, a frame or a scan
THIN_PT = 2.0                 # a path this thin is a rule (table grid, underline, header bar)
CLUSTER_GAP_PT = 4.0          # drawing objects this close belong to one drawing
MAX_FORM_DEPTH = 4            # forms inside forms are looked into this deep (for their images)
MAX_PIECES_PER_PAGE = 4000    # beyond this many drawing objects a page is one drawing (a plot of dots)
GRID_GAP_PT = 36              # sub-figures this close, with only their labels between, are one figure
MAX_TEXT_SHARE = 0.3          # an uncaptioned drawing whose area is this much text is a box around text
RUNNING_MIN_PAGES = 3         # the same image / drawing on this many pages is a logo or an ornament
CAPTION_MAX_GAP_EMS = 4.0     # a caption-pattern line at most this many line heights from its figure
SHORT_LINE_MAX_GAP_EMS = 1.5  # a plain short line must be closer to count as the caption ...
SHORT_LINE_MAX_WORDS = 15     # ... and short
LABEL_MAX_WORDS = 3           # a line this short just beside a drawing is one of its labels ("time", "0.5")
ABOVE_PENALTY = 1.5           # a caption above a figure counts as this much farther than one below
CAPTION_MAX_LINES = 4         # a caption wraps to at most this many lines
FIGURE_PAD_PT = 2.0           # the PNG shows this much around the figure
MEMORY_TEXT_MAX_CHARS = 600   # words of the figure kept in its memory text
INDEX_NAME = "figures.json"

# "Figure 3.2: ...", "Fig. 4 (a) ...", "FIGURE S1. ...", "图 2-1 ROC 曲线示意", "图3.5：..."; not "Figure 5.1 shows ..."
# The number is taken whole ("7.1", never "7" then ".1 shows"); the rest must say something.
_NUMBER = r"(?P<num>(?:[A-Z][.\-]?)?\d+(?:[.\-–‐]\d+)*[a-z]?)(?![.\-–‐]?\d)"
_CAPTION_EN = re.compile(r"^(?P<label>(?i:figure|fig\.?)\s*" + _NUMBER + r")"
                         r"(?P<rest>(?:\s*[.:：|—–\-)]|\s+(?![a-z])).*[^\W_].*)$")
_CAPTION_ZH = re.compile(r"^(?P<label>图\s*" + _NUMBER + r")"
                         r"(?P<rest>(?!\s*(?:中|所|的|是|为|给出|展示|显示|表示|可见|说明|描述|和|与|及))"
                         r"[\s.:：|—–\-]?.*[^\W_].*)$")
# The first or last line read inside a picture that starts "Figure 1 ..." is its caption, whatever follows.
_CAPTION_INSIDE = re.compile(r"^(?P<label>(?:(?i:figure|fig\.?)|图)\s*" + _NUMBER + r")(?P<rest>.*)$")
_SUBFIGURE_LABEL = re.compile(r"^[(（]?[a-h][)）]\s*\S")   # "(a) first split", "b) ..."
_LEADING_PUNCT = re.compile(r"^[\s.:：|—–\-]+")
_ALNUM = re.compile(r"[^\W_]")


@dataclass
class Figure:
    """One figure of a PDF."""
    page: int                 # 1-based
    bbox: Box                 # left, bottom, right, top in PDF points, origin bottom left (PDFium text rects)
    caption: str = ""         # "Figure 3.2.: Stack diagram." as printed; "" when none was found
    label: str = ""           # "Figure 3.2" / "图 2-1" when the caption is numbered, else ""
    kind: str = "image"       # "image" (a raster image) or "vector" (drawn with paths)
    text: str = ""            # words inside the figure, one line of it per line
    text_source: str = ""     # "text layer", "ocr" or "" (no words)
    png: bytes = field(default=b"", repr=False)   # the page region at FIGURE_DPI
    size: tuple[int, int] = (0, 0)               # the PNG's width and height in pixels

    def as_dict(self) -> dict:
        """The figure without its pixels, as stored in the JSON index."""
        return {"page": self.page, "bbox": [round(v, 2) for v in self.bbox], "caption": self.caption,
                "label": self.label, "kind": self.kind, "text": self.text, "text_source": self.text_source,
                "width": self.size[0], "height": self.size[1]}


@dataclass
class _Line:
    text: str
    box: Box


@dataclass
class _Piece:
    box: Box
    kind: str                 # "image" | "vector"
    thin: bool = False        # a rule: a table grid line, an underline
    simple: bool = False      # a rectangle or a line: what boxes, tables and code listings are made of
    bleeds: bool = False      # runs off the page: a cover or chapter-opening ornament
    key: str = ""             # an image's content hash (logo detection)


@dataclass
class _Page:
    index: int
    pieces: list[_Piece]
    lines: list[_Line]


@dataclass
class _Candidate:
    page: int
    box: Box
    kind: str
    simple_only: bool
    thin_only: bool
    bleeds: bool
    caption: str = ""
    label: str = ""
    pattern_caption: bool = False
    caption_lines: list[int] = field(default_factory=list)
    text: str = ""


# --- the entry point ----------------------------------------------------------------------------------

def extract_figures(pdf: str | Path | bytes, *, ocr: bool = True, max_figures: int = 200,
                    progress: Progress | None = None) -> list[Figure]:
    """The figures of a PDF (a path or its bytes), in page order, at most `max_figures`.

    With `ocr`, raster figures (and vector ones without a text layer) are read by rag.ocr, outside
    PDFium's lock; without it (or when the model is unavailable) they have no words. Raises
    DocumentError when the PDF cannot be opened; a page or figure that fails is logged and skipped.
    """
    started = time.perf_counter()
    data = pdf if isinstance(pdf, (bytes, bytearray)) else Path(pdf).read_bytes()
    with PDFIUM_LOCK:
        try:
            document = pdfium.PdfDocument(bytes(data))
        except pdfium.PdfiumError as exc:
            raise DocumentError("The PDF cannot be opened to find its figures; it may be damaged or locked.",
                                key="err_figures_unopenable") from exc
    try:
        pages = _scan_pages(document, progress)
        candidates = _figures_of(pages)
        if len(candidates) > max_figures:
            log.info("Keeping the first %d of %d figures", max_figures, len(candidates))
            candidates = candidates[:max_figures]
        figures = _cut_out(document, candidates, ocr, progress)
    finally:
        with PDFIUM_LOCK:
            document.close()
    log.info("Found %d figures (%d raster, %d with words) in %.1f s", len(figures),
             sum(f.kind == "image" for f in figures), sum(bool(f.text) for f in figures),
             time.perf_counter() - started)
    return figures


def _report(progress: Progress | None, stage: str, done: int, total: int) -> None:
    if progress is None:
        return
    try:
        progress(stage, done, total)
    except Exception:  # noqa: BLE001 - the caller's code must not cost the figures
        log.warning("The progress callback failed at %s %d/%d", stage, done, total, exc_info=True)


# --- pass 1: what is drawn on each page (under the lock, one page at a time) ---------------------------------

def _scan_pages(document: pdfium.PdfDocument, progress: Progress | None) -> list[_Page]:
    with PDFIUM_LOCK:
        count = len(document)
    pages = []
    for index in range(count):
        try:
            with PDFIUM_LOCK:
                page = document[index]
                try:
                    found = _scan_page(page, index)
                finally:
                    page.close()
        except Exception:  # noqa: BLE001 - one odd page must not cost the other figures
            log.warning("Looking for figures on page %d failed", index + 1, exc_info=True)
            found = None
        if found is not None:
            pages.append(found)
        _report(progress, "figures", index + 1, count)
    return pages


def _scan_page(page: pdfium.PdfPage, index: int) -> _Page | None:
    """The page's drawing objects worth a look and its text lines; None when it can hold no figure."""
    left, bottom, right, top = page.get_cropbox()
    page_box = (left, bottom, right, top)
    page_area = max((right - left) * (top - bottom), 1.0)
    pieces: list[_Piece] = []
    text_objects: list = []
    _collect(pdfium_c.FPDFPage_CountObjects(page), lambda i: pdfium_c.FPDFPage_GetObject(page, i),
             None, 0, True, page_area, pieces, text_objects)
    kept = []
    for piece in pieces:
        box = _clip(piece.box, page_box)
        if box is None or _area(box) >= MAX_PAGE_SHARE * page_area:
            continue
        w, h = box[2] - box[0], box[3] - box[1]
        if piece.kind == "image" and ((w < MIN_IMAGE_SIDE_PT and h < MIN_IMAGE_SIDE_PT) or min(w, h) < MIN_THIN_SIDE_PT):
            continue
        piece.bleeds = not _inside(piece.box, _grow(page_box, 1.0))
        piece.box = box
        kept.append(piece)
    if len(kept) > MAX_PIECES_PER_PAGE:   # a scatter plot of dots: one drawing, not thousands of pieces
        vectors = [p for p in kept if p.kind == "vector"]
        kept = [p for p in kept if p.kind == "image"] + [_Piece(_union([p.box for p in vectors]), "vector")]
    # Fraction bars, underlines, table rules and bullets alone make no figure: skip the text of such pages.
    if not any(_big_enough(_union([p.box for p in group])) for group in _cluster(kept)):
        return None
    # A page without visible text is a scan (or a full-page picture): rag/ocr.py reads it as text.
    if not text_objects or all(pdfium_c.FPDFTextObj_GetTextRenderMode(obj) == pdfium_c.FPDF_TEXTRENDERMODE_INVISIBLE
                               for obj in text_objects):
        return None
    textpage = page.get_textpage()
    try:
        lines = _text_lines(textpage)
    finally:
        textpage.close()
    if not lines:
        return None
    return _Page(index, kept, lines)


def _collect(count: int, get_object, matrix, depth: int, top_level: bool, page_area: float,
             pieces: list[_Piece], text_objects: list) -> None:
    """Images, paths, shadings and forms of a page (forms also looked into, for their images)."""
    if depth > MAX_FORM_DEPTH:
        return
    for i in range(max(count, 0)):
        obj = get_object(i)
        kind = pdfium_c.FPDFPageObj_GetType(obj)
        if kind == pdfium_c.FPDF_PAGEOBJ_TEXT:
            text_objects.append(obj)
            continue
        box = _bounds(obj, matrix)
        if box is None:
            continue
        if kind == pdfium_c.FPDF_PAGEOBJ_IMAGE:
            pieces.append(_Piece(box, "image", key=_image_key(obj)))
        elif kind == pdfium_c.FPDF_PAGEOBJ_PATH:
            if top_level:   # paths inside a form are drawn by the form's own piece
                thin = min(box[2] - box[0], box[3] - box[1]) < THIN_PT
                pieces.append(_Piece(box, "vector", thin=thin, simple=thin or _is_simple_path(obj)))
        elif kind == pdfium_c.FPDF_PAGEOBJ_SHADING:
            if top_level:
                pieces.append(_Piece(box, "vector"))
        elif kind == pdfium_c.FPDF_PAGEOBJ_FORM:
            inner = _matrix(obj)
            if matrix is not None:
                inner = _compose(matrix, inner)
            # A form as big as the page is a wrapper around the page's content (some producers put
            # everything in one): its objects count as the page's own.
            container = top_level and _area(box) >= MAX_PAGE_SHARE * page_area
            before = len(pieces)
            _collect(pdfium_c.FPDFFormObj_CountObjects(obj), lambda j, form=obj: pdfium_c.FPDFFormObj_GetObject(form, j),
                     inner, depth + 1, container, page_area, pieces, text_objects)
            if top_level and not container:
                images = [p.box for p in pieces[before:] if p.kind == "image"]
                # A form that only holds an image is that image; otherwise it is a drawing.
                if not images or _area(_union(images)) < 0.9 * _area(box):
                    pieces.append(_Piece(box, "vector"))


def _is_simple_path(obj) -> bool:
    """A straight-edged path of at most five points: a rectangle, a line or a triangle (an arrow head)."""
    count = pdfium_c.FPDFPath_CountSegments(obj)
    if count < 0 or count > 6:
        return False
    return all(pdfium_c.FPDFPathSegment_GetType(pdfium_c.FPDFPath_GetPathSegment(obj, j)) != pdfium_c.FPDF_SEGMENT_BEZIERTO
               for j in range(count))


def _bounds(obj, matrix) -> Box | None:
    """An object's box in page space; objects inside forms report theirs in the form's space."""
    l, b, r, t = (ctypes.c_float() for _ in range(4))
    if not pdfium_c.FPDFPageObj_GetBounds(obj, l, b, r, t):
        return None
    box = (l.value, b.value, r.value, t.value)
    if matrix is not None:
        xs, ys = zip(*(_apply(matrix, x, y) for x in (box[0], box[2]) for y in (box[1], box[3])))
        box = (min(xs), min(ys), max(xs), max(ys))
    return box


def _matrix(obj) -> tuple[float, ...]:
    m = pdfium_c.FS_MATRIX()
    if not pdfium_c.FPDFPageObj_GetMatrix(obj, m):
        return (1.0, 0.0, 0.0, 1.0, 0.0, 0.0)
    return (m.a, m.b, m.c, m.d, m.e, m.f)


def _compose(outer: tuple[float, ...], inner: tuple[float, ...]) -> tuple[float, ...]:
    """The matrix that applies `inner`, then `outer` (PDF row-vector convention)."""
    a, b, c, d, e, f = inner
    A, B, C, D, E, F = outer
    return (a * A + b * C, a * B + b * D, c * A + d * C, c * B + d * D, e * A + f * C + E, e * B + f * D + F)


def _apply(m: tuple[float, ...], x: float, y: float) -> tuple[float, float]:
    return m[0] * x + m[2] * y + m[4], m[1] * x + m[3] * y + m[5]


def _image_key(obj) -> str:
    """A hash of the image's stored bytes: the same logo on every page has the same key."""
    size = pdfium_c.FPDFImageObj_GetImageDataRaw(obj, None, 0)
    w, h = ctypes.c_uint(), ctypes.c_uint()
    pdfium_c.FPDFImageObj_GetImagePixelSize(obj, w, h)
    digest = hashlib.blake2b(f"{w.value}x{h.value}:{size}".encode(), digest_size=12)
    if 0 < size <= 64 * 2**20:
        buffer = (ctypes.c_ubyte * size)()
        pdfium_c.FPDFImageObj_GetImageDataRaw(obj, buffer, size)
        digest.update(bytes(buffer))
    return digest.hexdigest()


def _text_lines(textpage: pdfium.PdfTextPage) -> list[_Line]:
    """The page's text lines (as PDFium breaks them) with their boxes: the union of each line's rectangles."""
    text = textpage.get_text_range()
    if not _ALNUM.search(text):
        return []
    # PDFium counts text positions in UTF-16 units; Python counts code points (they differ past the BMP).
    utf16 = utf16_offsets(text)
    lines = []
    for match in re.finditer(r"[^\r\n]+", text):
        words = " ".join(match.group().split())
        if not words:
            continue
        start, end = (utf16[match.start()], utf16[match.end()]) if utf16 else (match.start(), match.end())
        rects = [textpage.get_rect(i) for i in range(textpage.count_rects(start, end - start))]
        if rects:
            lines.append(_Line(unicodedata.normalize("NFKC", words), _union(rects)))
    return lines


def _cjk(ch: str) -> bool:
    return "\u2e80" <= ch <= "\u9fff" or "\uf900" <= ch <= "\ufaff" or "\uff00" <= ch <= "\uffef"


# --- between the passes: which drawings are figures, and their captions (no PDFium) ---------------------------

def _figures_of(pages: list[_Page]) -> list[_Candidate]:
    # Logos: the same image bytes on several pages.
    image_pages: dict[str, set[int]] = defaultdict(set)
    for page in pages:
        for piece in page.pieces:
            if piece.kind == "image":
                image_pages[piece.key].add(page.index)
    repeated = {key for key, on in image_pages.items() if len(on) >= RUNNING_MIN_PAGES}
    candidates: list[_Candidate] = []
    for page in pages:
        pieces = [p for p in page.pieces if not (p.kind == "image" and p.key in repeated)]
        if pieces:
            candidates += _page_figures(page, pieces)
    # Ornaments: the same uncaptioned drawing at the same place on several pages.
    places: dict[tuple, set[int]] = defaultdict(set)
    for cand in candidates:
        places[_place(cand)].add(cand.page)
    return [c for c in candidates
            if c.pattern_caption or len(places[_place(c)]) < RUNNING_MIN_PAGES]


def _place(cand: _Candidate) -> tuple:
    return (cand.kind,) + tuple(round(v / 4) for v in cand.box)


def _big_enough(box: Box) -> bool:
    """Big enough for a figure with a caption (one without must be bigger, see `_page_figures`)."""
    w, h = box[2] - box[0], box[3] - box[1]
    return min(w, h) >= MIN_VECTOR_SIDE_PT and max(w, h) >= MIN_CAPTIONED_LONG_PT


def _page_figures(page: _Page, pieces: list[_Piece]) -> list[_Candidate]:
    lines = page.lines
    captions = [i for i, line in enumerate(lines) if _caption_match(line.text)]
    found: list[_Candidate] = []
    for members in _cluster(pieces):
        box = _union([p.box for p in members])
        kind = "image" if any(p.kind == "image" for p in members) else "vector"
        if kind == "vector":
            box = _with_labels(box, [ln for i, ln in enumerate(lines) if i not in captions])
        if kind == "image" or _big_enough(box):
            found.append(_Candidate(page.index + 1, box, kind, simple_only=all(p.simple for p in members),
                                    thin_only=all(p.thin for p in members), bleeds=any(p.bleeds for p in members)))
    for cand in found:
        # A sub-figure's label just below it ("(a) first split") is part of it.
        for line in lines:
            gap = _vertical_gap(cand.box, line.box)
            if (_SUBFIGURE_LABEL.match(line.text) and gap is not None and line.box[3] <= cand.box[1] + 1
                    and gap <= 3 * (line.box[3] - line.box[1]) and _inside_x(line.box, cand.box)):
                cand.box = _union([cand.box, line.box])
    found = _merge_grid(found, lines)
    found = _assign_captions(found, lines, captions)
    out = []
    for cand in found:
        w, h = cand.box[2] - cand.box[0], cand.box[3] - cand.box[1]
        inside = [ln for k, ln in enumerate(lines)
                  if _inside(ln.box, cand.box, center=True) and k not in cand.caption_lines]
        cand.text = "\n".join(ln.text for ln in inside)
        if cand.kind == "vector" and not cand.pattern_caption:
            # Rectangles and lines with text in them are boxes, tables and code listings; what runs
            # off the page is an ornament.
            if (cand.simple_only or cand.bleeds or min(w, h) < MIN_UNCAPTIONED_SIDE_PT
                    or max(w, h) < MIN_UNCAPTIONED_LONG_PT or _text_share(cand.box, inside) > MAX_TEXT_SHARE):
                continue
        out.append(cand)
    return sorted(out, key=lambda c: (-c.box[3], c.box[0]))


def _with_labels(box: Box, lines: list[_Line]) -> Box:
    """A drawing's box grown by its labels: short lines sticking out of it (an axis title half outside
    the plot), and tiny ones just beside it (tick labels, "time" under an axis)."""
    for _ in range(2):   # tick labels, then the axis title beyond them
        grown = box
        for ln in lines:
            if _inside(ln.box, box) or not _short(ln.text):
                continue
            height = max(ln.box[3] - ln.box[1], 1.0)
            sticks_out = _overlaps(ln.box, box) and _area(_clip(ln.box, box)) >= 0.25 * _area(ln.box)
            tiny = (len(ln.text.split()) <= LABEL_MAX_WORDS and ln.box[2] - ln.box[0] <= (box[2] - box[0]) / 3
                    and _overlaps(ln.box, _grow(box, 2 * height)))
            if sticks_out or tiny:
                grown = _union([grown, ln.box])
        if grown == box:
            break
        box = grown
    return box


def _short(text: str) -> bool:
    """A label or a caption-like line, not a line of a paragraph."""
    return len(text.split()) <= SHORT_LINE_MAX_WORDS and sum(map(_cjk, text)) <= 2 * SHORT_LINE_MAX_WORDS


def _text_share(box: Box, lines: list[_Line]) -> float:
    return sum(_area(_clip(ln.box, box) or (0, 0, 0, 0)) for ln in lines) / max(_area(box), 1.0)


def _merge_grid(cands: list[_Candidate], lines: list[_Line]) -> list[_Candidate]:
    """Sub-figures in a grid are one figure: neighbours at most GRID_GAP_PT apart with nothing
    between them but sub-figure labels (no caption, no paragraph). Boxes around text never merge."""
    def text_box(c: _Candidate) -> bool:
        return c.simple_only and _text_share(c.box, [ln for ln in lines if _inside(ln.box, c.box, center=True)]) > 0.05

    merged = True
    while merged:
        merged = False
        for i, a in enumerate(cands):
            for j in range(i + 1, len(cands)):
                b = cands[j]
                if text_box(a) or text_box(b):
                    continue
                stacked = min(a.box[2], b.box[2]) > max(a.box[0], b.box[0])
                gap = (max(a.box[1], b.box[1]) - min(a.box[3], b.box[3]) if stacked
                       else max(a.box[0], b.box[0]) - min(a.box[2], b.box[2]))
                if not (stacked or _side_by_side(a.box, b.box)) or gap > GRID_GAP_PT:
                    continue
                both = _union([a.box, b.box])
                between = [ln for ln in lines if _overlaps(ln.box, both) and not _inside(ln.box, a.box, center=True)
                           and not _inside(ln.box, b.box, center=True)]
                if any(not _SUBFIGURE_LABEL.match(ln.text) for ln in between):
                    continue
                _absorb(a, b)
                del cands[j]
                merged = True
                break
            if merged:
                break
    return cands


def _cluster(pieces: list[_Piece]) -> list[list[_Piece]]:
    """Pieces whose boxes touch (within CLUSTER_GAP_PT) grouped, then groups whose boxes overlap
    joined (a label-less piece inside a drawing's box belongs to it)."""
    parent = list(range(len(pieces)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    # A sweep from left to right: only pieces still reaching the current x can touch the next one.
    active: list[int] = []
    for i in sorted(range(len(pieces)), key=lambda k: pieces[k].box[0]):
        reach = _grow(pieces[i].box, CLUSTER_GAP_PT)
        active = [j for j in active if pieces[j].box[2] >= reach[0]]
        for j in active:
            if _overlaps(reach, pieces[j].box):
                parent[root(j)] = root(i)
        active.append(i)
    by_root: dict[int, list[_Piece]] = defaultdict(list)
    for i, piece in enumerate(pieces):
        by_root[root(i)].append(piece)
    groups = [(_union([p.box for p in members]), members) for members in by_root.values()]
    merged = True
    while merged:
        merged = False
        for i in range(len(groups)):
            for j in range(i + 1, len(groups)):
                if _overlaps(groups[i][0], groups[j][0]):
                    groups[i] = (_union([groups[i][0], groups[j][0]]), groups[i][1] + groups[j][1])
                    del groups[j]
                    merged = True
                    break
            if merged:
                break
    return [members for _, members in groups]


def _absorb(a: _Candidate, b: _Candidate) -> None:
    """`a` becomes the figure made of `a` and `b`."""
    a.box = _union([a.box, b.box])
    a.kind = "image" if "image" in (a.kind, b.kind) else "vector"
    a.simple_only, a.thin_only = a.simple_only and b.simple_only, a.thin_only and b.thin_only
    a.bleeds = a.bleeds or b.bleeds


def _caption_match(text: str) -> re.Match | None:
    return _CAPTION_EN.match(text) or _CAPTION_ZH.match(text)


def _assign_captions(cands: list[_Candidate], lines: list[_Line], captions: list[int]) -> list[_Candidate]:
    """Each figure gets the nearest caption-pattern line (one figure per line, nearest pairs first);
    figures side by side that share their nearest caption line are one figure (sub-figures)."""
    pairs = []
    for ci, cand in enumerate(cands):
        for li in captions:
            gap = _vertical_gap(cand.box, lines[li].box)
            height = lines[li].box[3] - lines[li].box[1]
            if gap is not None and gap <= CAPTION_MAX_GAP_EMS * max(height, 6.0):
                # Between two figures, a caption belongs to the one above it (captions go below, mostly),
                # and to a picture or a drawing before rectangles (a box of text) before rules (a table).
                above = lines[li].box[1] >= cand.box[3] - 1
                pairs.append((cand.simple_only + cand.thin_only, gap * ABOVE_PENALTY + 1.0 if above else gap, ci, li))
    pairs.sort()
    taken_by: dict[int, int] = {}
    given: dict[int, int] = {}
    merged_into: dict[int, int] = {}
    for _, _, ci, li in pairs:
        if ci in given or ci in merged_into:
            continue
        owner = taken_by.get(li)
        if owner is None:
            taken_by[li], given[ci] = ci, li
        elif _side_by_side(cands[owner].box, cands[ci].box):
            merged_into[ci] = owner
    for ci, owner in merged_into.items():
        _absorb(cands[owner], cands[ci])
    out = []
    used = set(given.values())
    for ci, cand in enumerate(cands):
        if ci in merged_into:
            continue
        if ci in given:
            li = given[ci]
            cand.caption_lines = _caption_lines(lines, li, cand.box, used)
            cand.caption = _joined([lines[k].text for k in cand.caption_lines])
            match = _caption_match(lines[li].text)
            cand.label = " ".join(match.group("label").split())
            cand.pattern_caption = True
        else:
            k = _short_line(lines, cand.box, used)
            if k is not None:
                cand.caption, cand.caption_lines = lines[k].text, [k]
        out.append(cand)
    return out


def _caption_lines(lines: list[_Line], first: int, box: Box, used: set[int]) -> list[int]:
    """The caption line and the lines it wraps onto (close below it, within the figure's width)."""
    taken, current = [first], lines[first].box
    for k in range(first + 1, min(first + CAPTION_MAX_LINES, len(lines))):
        nxt = lines[k].box
        height = current[3] - current[1]
        if (k in used or _caption_match(lines[k].text) or _inside(nxt, box, center=True)
                or not (0 <= current[1] - nxt[3] + 0.3 * height <= 0.9 * height)
                or nxt[0] < min(box[0], current[0]) - height or nxt[2] > max(box[2], current[2]) + height):
            break
        taken.append(k)
        current = nxt
    return taken


def _joined(parts: list[str]) -> str:
    """Lines as one text: a space between them, none between two CJK characters."""
    text = ""
    for part in parts:
        text += ("" if not text or (_cjk(text[-1]) and _cjk(part[0])) else " ") + part
    return text


def _short_line(lines: list[_Line], box: Box, used: set[int]) -> int | None:
    """The nearest short line standing alone just above or below the figure (no caption pattern)."""
    best = None
    for k, line in enumerate(lines):
        if k in used or _inside(line.box, box, center=True):
            continue
        gap = _vertical_gap(box, line.box)
        height = line.box[3] - line.box[1]
        if gap is None or gap > SHORT_LINE_MAX_GAP_EMS * max(height, 6.0):
            continue
        if not _short(line.text):
            continue
        if any(j != k and _vertical_gap(line.box, other.box) is not None
               and _vertical_gap(line.box, other.box) < 0.6 * height
               and not _inside(other.box, box, center=True) for j, other in enumerate(lines)):
            continue   # a line of a paragraph, not a label standing alone
        if best is None or gap < best[0]:
            best = (gap, k)
    return best[1] if best else None


def _vertical_gap(box: Box, line: Box) -> float | None:
    """How far the line is above or below the box (0 when it overlaps it), None when it is beside it."""
    if line[2] <= box[0] or line[0] >= box[2]:
        return None
    if line[3] <= box[1] + 1:
        return max(box[1] - line[3], 0.0)
    if line[1] >= box[3] - 1:
        return max(line[1] - box[3], 0.0)
    return 0.0


def _inside_x(inner: Box, outer: Box) -> bool:
    return inner[0] >= outer[0] - 2 and inner[2] <= outer[2] + 2


def _side_by_side(a: Box, b: Box) -> bool:
    overlap = min(a[3], b[3]) - max(a[1], b[1])
    return overlap >= 0.5 * min(a[3] - a[1], b[3] - b[1])


# --- boxes --------------------------------------------------------------------------------------------------

def _area(box: Box) -> float:
    return max(box[2] - box[0], 0.0) * max(box[3] - box[1], 0.0)


def _union(boxes: list[Box]) -> Box:
    return (min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes), max(b[3] for b in boxes))


def _clip(box: Box, frame: Box) -> Box | None:
    out = (max(box[0], frame[0]), max(box[1], frame[1]), min(box[2], frame[2]), min(box[3], frame[3]))
    return out if out[2] > out[0] and out[3] > out[1] else None


def _grow(box: Box, by: float) -> Box:
    return (box[0] - by, box[1] - by, box[2] + by, box[3] + by)


def _overlaps(a: Box, b: Box) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _inside(inner: Box, outer: Box, center: bool = False) -> bool:
    if center:
        x, y = (inner[0] + inner[2]) / 2, (inner[1] + inner[3]) / 2
        return outer[0] <= x <= outer[2] and outer[1] <= y <= outer[3]
    return inner[0] >= outer[0] - 1 and inner[1] >= outer[1] - 1 and inner[2] <= outer[2] + 1 and inner[3] <= outer[3] + 1


# --- pass 2: pixels and words (render under the lock, OCR outside it) ------------------------------------------

def _cut_out(document: pdfium.PdfDocument, candidates: list[_Candidate], use_ocr: bool,
             progress: Progress | None) -> list[Figure]:
    if use_ocr and any(_needs_ocr(c) for c in candidates):
        try:
            rag_ocr.ocr_engine()
        except rag_ocr.OcrUnavailable as exc:
            log.warning("OCR is unavailable, figures keep only their text layer: %s", exc)
            use_ocr = False
    figures = []
    for done, cand in enumerate(candidates, start=1):
        read = use_ocr and _needs_ocr(cand)
        # One rendering for both: at the OCR resolution when the figure is read, scaled down for the PNG.
        longest = max(cand.box[2] - cand.box[0], cand.box[3] - cand.box[1]) + 2 * FIGURE_PAD_PT
        png_scale = min(FIGURE_DPI / 72.0, MAX_PNG_SIDE / longest)
        scale = max(png_scale, min(rag_ocr.RENDER_DPI / 72.0, rag_ocr.MAX_RENDER_SIDE / longest)) if read else png_scale
        try:
            with PDFIUM_LOCK:
                page = document[cand.page - 1]
                try:
                    box = _clip(_grow(cand.box, FIGURE_PAD_PT), tuple(page.get_cropbox())) or cand.box
                    image = _render_region(page, box, scale)
                finally:
                    page.close()
        except Exception:  # noqa: BLE001 - one figure that will not render must not cost the others
            log.warning("Rendering the figure on page %d failed", cand.page, exc_info=True)
            _report(progress, "figure-images", done, len(candidates))
            continue
        text, source = cand.text, "text layer" if cand.text else ""
        caption, label = cand.caption, cand.label
        if read:
            try:
                found = rag_ocr.ocr_page(image, scale)
            except Exception:  # noqa: BLE001 - the model choking on one picture must not cost the rest
                log.warning("OCR failed on the figure on page %d", cand.page, exc_info=True)
                found = []
            if found:
                text, source = "\n".join(line.text for line in found), "ocr"
                # A picture that carries its own caption ("Figure 2 to paragraph (h)(3) ...", first or last line).
                match = None if label else next(filter(None, (_CAPTION_INSIDE.match(found[k].text) for k in (0, -1))), None)
                if match:
                    caption, label = match.string, " ".join(match.group("label").split())
        png, size = _png(image, png_scale / scale)
        del image
        figures.append(Figure(page=cand.page, bbox=tuple(round(v, 2) for v in cand.box), caption=caption,
                              label=label, kind=cand.kind, text=text, text_source=source, png=png, size=size))
        _report(progress, "figure-images", done, len(candidates))
    return figures


def _needs_ocr(cand: _Candidate) -> bool:
    """Raster figures are read by OCR; drawings only when their words are not in the text layer."""
    return cand.kind == "image" or not cand.text


def _render_region(page: pdfium.PdfPage, box: Box, scale: float):
    """The region `box` (page space) of the page as displayed, as a BGR pixel array at `scale` pixels per point."""
    left, bottom, right, top = page.get_cropbox()
    width, height = right - left, top - bottom
    x0, y0, x1, y1 = box[0] - left, box[1] - bottom, box[2] - left, box[3] - bottom
    rotation = page.get_rotation() % 360
    # The region on the page as displayed (rotated clockwise by /Rotate), origin bottom left.
    if rotation == 90:
        x0, y0, x1, y1, shown = y0, width - x1, y1, width - x0, (height, width)
    elif rotation == 180:
        x0, y0, x1, y1, shown = width - x1, height - y1, width - x0, height - y0, (width, height)
    elif rotation == 270:
        x0, y0, x1, y1, shown = height - y1, x0, height - y0, x1, (height, width)
    else:
        shown = (width, height)
    crop = (max(x0, 0.0), max(y0, 0.0), max(shown[0] - x1, 0.0), max(shown[1] - y1, 0.0))
    bitmap = page.render(scale=scale, crop=crop)
    try:
        image = bitmap.to_numpy().copy()   # the bitmap's buffer dies with it
    finally:
        bitmap.close()
    return image


def _png(image, resize: float) -> tuple[bytes, tuple[int, int]]:
    """A BGR (or grey) pixel array as PNG bytes, scaled by `resize`."""
    from PIL import Image
    pil = Image.fromarray(image[:, :, 2::-1] if image.ndim == 3 else image)
    if resize < 0.99:
        pil = pil.resize((max(1, round(pil.width * resize)), max(1, round(pil.height * resize))), Image.LANCZOS)
    out = io.BytesIO()
    pil.save(out, format="PNG", optimize=False)
    return out.getvalue(), pil.size


# --- storage beside the stored PDF ------------------------------------------------------------------------------

def figures_dir(pdf_path: str | Path) -> Path:
    """Where the figures of the stored PDF `…/<doc_id>.pdf` are kept: `…/<doc_id>.figures/`."""
    return Path(pdf_path).with_suffix(".figures")


def save_figures(folder: str | Path, doc_id: str, figures: list[Figure]) -> list[dict]:
    """Write each figure's PNG and the index `figures.json` into `folder` (replacing what was there).

    Returns the index entries: `Figure.as_dict()` plus "file" (the PNG's name) and "path" (its full
    path). No figures removes the folder and returns [].
    """
    folder = Path(folder)
    shutil.rmtree(folder, ignore_errors=True)
    if not figures:
        return []
    folder.mkdir(parents=True, exist_ok=True)
    entries = []
    per_page: dict[int, int] = defaultdict(int)
    for fig in figures:
        per_page[fig.page] += 1
        name = f"p{fig.page:04d}-{per_page[fig.page]}.png"
        (folder / name).write_bytes(fig.png)
        entries.append({**fig.as_dict(), "file": name})
    payload = {"version": 1, "doc_id": doc_id, "figures": entries}
    fd, tmp = tempfile.mkstemp(prefix=INDEX_NAME, suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(payload, fh, ensure_ascii=False)
        os.replace(tmp, folder / INDEX_NAME)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return [{**entry, "path": str(folder / entry["file"])} for entry in entries]


def load_figures(folder: str | Path) -> list[dict]:
    """The index entries saved by `save_figures` (with "path"), in page order; [] when there are none."""
    folder = Path(folder)
    index = folder / INDEX_NAME
    if not index.is_file():
        return []
    try:
        entries = json.loads(index.read_text(encoding="utf-8"))["figures"]
        return [{**entry, "page": int(entry["page"]), "bbox": [float(v) for v in entry["bbox"]][:4],
                 "path": str(folder / Path(entry["file"]).name)} for entry in entries]
    except (OSError, ValueError, TypeError, KeyError):
        log.warning("Ignoring the unreadable figure index %s", index, exc_info=True)
        return []


def remove_figures(folder: str | Path) -> None:
    """Delete a document's figures (when the document is deleted)."""
    shutil.rmtree(Path(folder), ignore_errors=True)


# --- as memories ------------------------------------------------------------------------------------------------

def figure_memory_text(figure: Figure | dict, doc_name: str) -> str:
    """The text a figure is remembered (and found) by, e.g.
    "Figure 3.2 (p. 31 of thinkpython2.pdf): Stack diagram. Text in the figure: __main__ cat …"."""
    get = figure.get if isinstance(figure, dict) else lambda key, default=None: getattr(figure, key, default)
    label, caption, page = get("label", "") or "", get("caption", "") or "", get("page")
    body = caption
    if label:
        match = _CAPTION_INSIDE.match(caption)
        body = _LEADING_PUNCT.sub("", match.group("rest")) if match else caption
    text = " ".join((get("text", "") or "").split())
    if len(text) > MEMORY_TEXT_MAX_CHARS:
        text = text[:MEMORY_TEXT_MAX_CHARS].rsplit(" ", 1)[0] + " …"
    out = f"{label or 'Figure'} (p. {page} of {doc_name})"
    out += f": {body}" if body else ""
    if text:
        out += ("" if out.endswith((".", "。", "!", "?")) else ".") + f" Text in the figure: {text}"
    return out


def memory_records(entries: list[dict], doc_id: str, doc_name: str) -> list[dict]:
    """Records for MemoryManager.add_many: one perceptual image memory per saved figure (`save_figures`'s entries)."""
    return [{"content": figure_memory_text(entry, doc_name), "memory_type": "perceptual", "modality": "image",
             "file_path": entry["path"], "importance": 0.4,
             "metadata": {"doc_id": doc_id, "doc_name": doc_name, "page": entry["page"], "figure": entry.get("label", ""),
                          "bbox": entry["bbox"], "source": "pdf_figure"}}
            for entry in entries]
