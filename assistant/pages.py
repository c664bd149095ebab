"""A PDF page rendered as an image with a cited passage highlighted.

The passage is the chunk text (or quoted sentences) the converter produced, so it rarely matches the
page's text layer character for character: line breaks, hyphenation and footnote marks differ. We
therefore match WORDS: every run of at least `MIN_RUN` consecutive page words that also occur as a
run in the passage is highlighted. The boxes come from PDFium's own text rectangles.

A scanned page has no text layer; its text was read by OCR at upload and its lines kept beside the
stored PDF (rag/ocr.py). There the same word runs are matched against the OCR'd lines, and the lines
they touch are highlighted.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from core.errors import DocumentError
from core.text import CJK_CHAR
from rag.ocr import load_ocr_lines
from rag.pdf_converter import PDFIUM_LOCK

MIN_RUN = 4            # words (or CJK characters) a highlighted run needs, so stray words stay unmarked
LONG_RUN = 7           # ...and for passages of 21+ words, so shared stock phrases stay unmarked
FIGURE_OUTLINE = (37, 99, 235, 255)     # blue: not the passage's yellow
HIGHLIGHT = (255, 214, 0, 90)
OUTLINE = (230, 150, 0, 255)
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
# PDFium is not thread-safe: share the converter's lock so rendering never overlaps a conversion.
_pdfium_lock = PDFIUM_LOCK


@dataclass
class RenderedPage:
    image: "object"                      # PIL.Image.Image
    page: int                            # 1-based
    page_count: int
    boxes: list[tuple[float, float, float, float]] = field(default_factory=list)  # image pixels
    matched_words: int = 0
    figures: list[dict] = field(default_factory=list)   # the page's figures ({"label", "caption", …}), outlined


def _tokens(text: str) -> list[tuple[str, int, int]]:
    """(normalised token, start, end): words, with each CJK character a token of its own."""
    out = []
    for m in _WORD.finditer(text):
        word = m.group()
        if CJK_CHAR.search(word):
            for i, ch in enumerate(word):
                out.append((ch.lower(), m.start() + i, m.start() + i + 1))
        else:
            out.append((word.lower(), m.start(), m.end()))
    return out


def matching_runs(page_text: str, passage: str, min_run: int = MIN_RUN) -> list[tuple[int, int]]:
    """Character ranges (start, end) of page_text covered by word runs shared with the passage."""
    page = _tokens(page_text)
    words = [t[0] for t in _tokens(passage)]
    if len(words) < min_run or len(page) < min_run:
        return []
    grams = {tuple(words[i:i + min_run]) for i in range(len(words) - min_run + 1)}
    covered = [False] * len(page)
    page_words = [t[0] for t in page]
    for i in range(len(page) - min_run + 1):
        if tuple(page_words[i:i + min_run]) in grams:
            for j in range(i, i + min_run):
                covered[j] = True
    # A long passage shares stock phrases ("as a result of the") with the rest of the page; only
    # longer runs are the passage itself.
    keep = min_run if len(words) < 3 * LONG_RUN else LONG_RUN
    runs, start = [], None
    for i, c in enumerate(covered + [False]):
        if c and start is None:
            start = i
        elif not c and start is not None:
            if i - start >= keep:
                runs.append((page[start][1], page[i - 1][2]))
            start = None
    return runs


def _ocr_text(lines: list[dict]) -> tuple[str, list[tuple[int, int]]]:
    """The OCR'd lines of a page as one text (a line each), and where each line sits in it."""
    parts, spans, offset = [], [], 0
    for line in lines:
        parts.append(line["text"])
        spans.append((offset, offset + len(line["text"])))
        offset += len(line["text"]) + 1
    return "\n".join(parts), spans


def _ocr_matches(lines: list[dict], passage: str) -> tuple[list[tuple[float, float, float, float]], int]:
    """Boxes (PDF points) of the OCR'd lines the passage's word runs touch, and the words matched."""
    text, spans = _ocr_text(lines)
    boxes, matched, used = [], 0, set()
    for start, end in matching_runs(text, passage):
        matched += len(_tokens(text[start:end]))
        for k, (line_start, line_end) in enumerate(spans):
            if line_start < end and start < line_end and k not in used:
                used.add(k)
                boxes.append(tuple(lines[k]["box"]))
    return boxes, matched


def _has_text_layer(text: str) -> bool:
    return bool(_WORD.search(text))


def render_page(pdf_path: str | Path, page: int, passage: str | None = None, *, scale: float = 1.5,
                figures: list[dict] | None = None) -> RenderedPage:
    """Page `page` (1-based) of the PDF as a PIL image, the passage's words highlighted and the page's
    `figures` (rag.figures records; others are ignored) outlined and labelled."""
    import pypdfium2 as pdfium
    from PIL import Image, ImageDraw

    path = Path(pdf_path)
    if not path.is_file():
        raise DocumentError("The original file of this document is no longer stored; upload it again to see its pages.",
                            key="err_original_missing")
    ocr_lines = load_ocr_lines(path).get(page, []) if passage else []
    with _pdfium_lock:
        try:
            pdf = pdfium.PdfDocument(str(path))
        except Exception as exc:  # noqa: BLE001 - pdfium raises its own error types
            raise DocumentError(f"'{path.name}' cannot be opened as a PDF to show its pages.",
                                key="err_pages_not_pdf", name=path.name) from exc
        try:
            count = len(pdf)
            if not 1 <= page <= count:
                raise DocumentError(f"This document has {count} pages; page {page} does not exist.",
                                    key="err_page_missing", count=count, page=page)
            pdf_page = pdf[page - 1]
            image = pdf_page.render(scale=scale).to_pil().convert("RGBA")
            # Boxes are PDF points, origin bottom left (PDFium text rects and OCR lines alike), of the
            # page as rendered: flip y against the rendered height.
            height = image.height / scale
            points: list[tuple[float, float, float, float]] = []
            matched = 0
            if passage:
                textpage = pdf_page.get_textpage()
                n_chars = textpage.count_chars()
                text = textpage.get_text_range(0, n_chars) if n_chars > 0 else ""
                if not _has_text_layer(text) and ocr_lines:
                    points, matched = _ocr_matches(ocr_lines, passage)
                for start, end in matching_runs(text, passage):
                    matched += len(_tokens(text[start:end]))
                    for i in range(textpage.count_rects(start, end - start)):
                        points.append(textpage.get_rect(i))
                textpage.close()
            pdf_page.close()
        finally:
            pdf.close()
    boxes = [(left * scale, (height - top) * scale, right * scale, (height - bottom) * scale)
             for left, bottom, right, top in points]
    if boxes:
        overlay = Image.new("RGBA", image.size, (0, 0, 0, 0))
        draw = ImageDraw.Draw(overlay)
        for x0, y0, x1, y1 in boxes:
            draw.rectangle((x0 - 1, y0 - 1, x1 + 1, y1 + 1), fill=HIGHLIGHT)
        image = Image.alpha_composite(image, overlay)
        # A margin mark makes the passage easy to find on a full page.
        ys = [b[1] for b in boxes] + [b[3] for b in boxes]
        ImageDraw.Draw(image).rectangle((4, min(ys), 9, max(ys)), fill=OUTLINE)
    on_page = [f for f in figures or [] if f.get("page") == page and len(f.get("bbox") or []) == 4]
    if on_page:
        image = _outline_figures(image, on_page, height, scale)
    return RenderedPage(image.convert("RGB"), page, count, boxes, matched, on_page)


def _outline_figures(image, figures: list[dict], height: float, scale: float):
    """A thin frame round each figure and its label ("Figure 3.1", else "Figure N") in the corner, so the
    figures the document's memories speak of can be found on the page."""
    from PIL import ImageDraw
    draw = ImageDraw.Draw(image)
    for number, figure in enumerate(figures, start=1):
        left, bottom, right, top = figure["bbox"]
        box = (left * scale, (height - top) * scale, right * scale, (height - bottom) * scale)
        draw.rectangle(box, outline=FIGURE_OUTLINE, width=2)
        label = figure_label(figure, number)
        x, y = box[0] + 3, max(0, box[1] - 14)
        draw.rectangle((x - 2, y, x + 7 * len(label) + 4, y + 13), fill=FIGURE_OUTLINE)
        draw.text((x, y), label, fill=(255, 255, 255, 255))
    return image


def figure_label(figure: dict, number: int) -> str:
    """What the figure is called on its page: its own label ("Figure 3.1") when the caption gave one."""
    return (figure.get("label") or f"Figure {number}").strip()


def best_page(pdf_path: str | Path, page_start: int, page_end: int, passage: str) -> int:
    """Of a passage's pages, the one sharing most of its words (a chunk may straddle a page break)."""
    if page_end <= page_start:
        return page_start
    import pypdfium2 as pdfium
    ocr_lines = load_ocr_lines(pdf_path)
    best, best_words = page_start, -1
    with _pdfium_lock:
        pdf = pdfium.PdfDocument(str(pdf_path))
        try:
            for p in range(page_start, min(page_end, len(pdf)) + 1):
                tp = pdf[p - 1].get_textpage()
                text = tp.get_text_range(0, tp.count_chars()) if tp.count_chars() > 0 else ""
                tp.close()
                if not _has_text_layer(text) and ocr_lines.get(p):
                    text = _ocr_text(ocr_lines[p])[0]   # a scan: its OCR'd text
                words = sum(len(_tokens(text[s:e])) for s, e in matching_runs(text, passage))
                if words > best_words:
                    best, best_words = p, words
        finally:
            pdf.close()
    return best
