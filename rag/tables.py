"""Tables on PDF pages → Markdown tables, so a row like "Total revenue $7,301.5" stays with its header.

Filings rarely draw ruling lines: their tables are words aligned in columns. pdfplumber's text
strategy finds them but cuts labels mid-word ("Cash and | cash equivale | nts") and costs ~0.2 s a
page; this module reads the characters PDFium already parsed and clusters them itself:

1. `may_hold_table` — a cheap look at the page text (several lines ending in numbers); only those
   pages pay for step 2.
2. words (PDFium's loose boxes of their first and last characters) → rows (by height) → segments
   (words closer than a column gap) → numbers or text.
3. a table is a run of rows whose numbers line up in columns (a column is a set of number
   segments whose x-ranges overlap: right-aligned numbers share their right edge); the rows
   above it that sit over the columns are its header ("December 1," / "2017" → one cell), short
   title lines above that are its caption.

Coordinates are PDF points with PDFium's origin (bottom-left: `top` larger = higher), as
`rag.pdf_converter._Line` has them. PDFium is not thread-safe: callers hold `PDFIUM_LOCK`.
"""
from __future__ import annotations

import bisect
import copy
import math
import re
import statistics
from dataclasses import dataclass, field

import pypdfium2.raw as pdfium_c

# --- tuning knobs (why each value: see the comment next to it) -------------------------------
GATE_MIN_LINES = 3          # a page needs this many lines ending in a number to be looked at
MIN_DATA_ROWS = 2           # fewer rows of numbers is a sentence with numbers, not a table
COLUMN_GAP = 0.6            # words further apart than 0.6 × font height are in different columns
ROW_GAP = 3.0               # rows further apart than 3 × their height end the table
HEADER_GAP = 2.5            # header rows sit within 2.5 heights of the row below them
MAX_HEADER_ROWS = 6          # "Twelve Months Ended" / "EPS" / "(Diluted" / "US" / "cents)": stacked labels
MAX_HEADER_WORDS = 8        # a header cell is a short label ("Years Ended December 31,")
MAX_CAPTION_ROWS = 3
MAX_CAPTION_WORDS = 15
MAX_CELL_WORDS = 4          # a text cell among the numbers ("N/A", "Level 2") is short

_WORD_RUN = re.compile(r"[^\s\ufeff]+")
_NON_BMP = re.compile("[\U00010000-\U0010FFFF]")
# A printed number as filings write it: $ 1,234.5  (1,234)  12.5 %  (0.3)%  2.1x, or a dash for nil.
_NUMBER = re.compile(r"^[$€£¥]?\s*\(?\s*[$€£¥]?\s*[-–−+]?\s*(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"
                     r"\s*\)?\s*%?\s*\)?(?:[x×]|\s*(?:bps?|pts?|pp))?$", re.I)
_NIL = re.compile(r"^[$€£¥]?\s*(?:[-–—−]+|n/?a|nm|n\.m\.|\*)\s*%?$", re.I)   # "—", "$ —", "— %", "NM"
_UNIT = re.compile(r"^(?:%|\)|\)%|%\)|bps?|pts?|pp|x|×)$", re.I)              # after a number: "(100) bps"
_YEAR = re.compile(r"^(?:19|20)\d\d$")
# A line ending the way table rows end: an amount as filings print it ("1,234", "$5", "(12)", "3.5",
# "7%") or two numbers ("2017 2016", "982 979"). A lone small integer ends code, indexes and prose.
_AMOUNT = r"(?:[$(]\s*\d[\d,.]*|\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+\.\d+|\d+\s?%)\)?%?"
_PLAIN = r"[$(]?\d[\d,.]*\)?%?"
_ROW_END = re.compile(rf"(?:^|\s){_AMOUNT}\s*$|(?:^|\s){_PLAIN}\s+{_PLAIN}\s*$")
# Cells of code and interpreter sessions ("x = 5", ">>> 40 + 2"), which line up like tables.
# ("-" and "*" are not among them: a filing writes nil as "-" and marks footnotes with "*".)
_CODE_CELL = re.compile(r"^(?:>>>|\.\.\.|[+/<>=]|==|\*\*|//|[-+*/%<>!=]=|\w+\s*[-+*/]?=)$")
_LETTER = re.compile(r"[^\W\d_]")
_PERIOD = re.compile(r"\b(?:ended|ending|as of|fiscal|years?|months|quarters?|weeks)\b", re.I)
_MONEY = re.compile(r"[$€£¥%,()]\s*\d|\d\s*[%)]|\d,\d")   # "$5", "1,234", "(12)", "7%"
_FOOTNOTE = re.compile(r"^\(?[a-z*†‡]\)$")


# --- data --------------------------------------------------------------------------------------

@dataclass
class Table:
    """A table found on a page: where it is, its caption and its Markdown."""
    bbox: tuple[float, float, float, float]   # left, bottom, right, top in PDF points (top > bottom)
    caption: str                               # the title line(s) above it, "" if none
    header: list[str]                          # one cell per column, the label column first
    body: list[list[str]]                      # one list of cells per row

    @property
    def markdown(self) -> str:
        """The header row, the |---| rule, one line per row."""
        return render_markdown(self.header, self.body)

    @property
    def n_rows(self) -> int:
        return len(self.body)

    @property
    def n_columns(self) -> int:      # including the label column
        return len(self.header)


@dataclass(eq=False)
class _Word:
    text: str
    x0: float
    x1: float
    bottom: float
    top: float

    @property
    def height(self) -> float:
        return self.top - self.bottom


@dataclass(eq=False)
class _Segment:
    """Words of one row closer than a column gap: a cell's worth of text."""
    words: list[_Word]
    text: str = ""
    x0: float = 0.0
    x1: float = 0.0
    numeric: bool = False

    def __post_init__(self) -> None:
        self.text = _tidy_number(" ".join(w.text for w in self.words))
        self.x0 = min(w.x0 for w in self.words)
        self.x1 = max(w.x1 for w in self.words)
        self.numeric = _is_number(self.text)


@dataclass(eq=False)   # identity: rows are found in lists with `index`
class _Row:
    words: list[_Word]
    top: float = 0.0
    bottom: float = 0.0
    height: float = 0.0
    segments: list[_Segment] = field(default_factory=list)
    data: bool | None = None    # `_is_data_row`, computed once: every step asks it

    @property
    def x0(self) -> float:
        return self.segments[0].x0

    @property
    def x1(self) -> float:
        return self.segments[-1].x1


# --- public API ----------------------------------------------------------------------------------

def may_hold_table(page_text: str) -> bool:
    """Whether the page is worth the table search: several lines end like rows of numbers (cheap,
    text only)."""
    count = 0
    for line in page_text.splitlines():
        if _ROW_END.search(line):
            count += 1
            if count >= GATE_MIN_LINES:
                return True
    return False


def find_tables(textpage, page_text: str | None = None) -> list[Table]:
    """Tables on one page (a `pypdfium2.PdfTextPage`), top to bottom. `page_text` must be that page's
    `textpage.get_text_range()` when the caller already has it (it saves the call); pages that fail
    the gate cost nothing more."""
    if page_text is None:
        page_text = textpage.get_text_range()
    if not may_hold_table(page_text):
        return []
    rows = _rows(_words(textpage, page_text))
    tables = (_table(rows, block, columns) for block, columns in _blocks(rows))
    return _with_inherited_headers([table for table in tables if table is not None])


def _with_inherited_headers(tables: list[Table]) -> list[Table]:
    """A statement set as parts under the same columns (ASSETS …, then a centred "LIABILITIES AND EQUITY" line,
    then the liabilities) is found as tables after the first with no column header of their own: each takes
    the header of the table above it when it has as many columns. "Total current liabilities 2,749,404" then
    reads as at June 30, 2023."""
    for above, table in zip(tables, tables[1:]):
        if table.n_columns == above.n_columns and not any(table.header[1:]) and any(above.header[1:]):
            table.header = ["", *above.header[1:]]
    return tables


def apply_tables(lines: list, tables: list[Table]) -> list:
    """The page's lines with each table's lines marked `drop` and one line carrying the table's
    Markdown inserted where the table starts (a new list; the line objects are changed in place).

    Works on any objects with `text, top, end_top, left, right, size, drop, heading, para_break`
    (e.g. `rag.pdf_converter._Line`). A line counts as inside a table when the middle of its first
    character lies in the table's box; a bold row label the converter took for a heading
    ("Costs and expenses") is a row of the table like the others. A line reaching far outside the
    box is kept (PDFium joined table text with prose: better a few cells twice than prose lost).
    The table line has size 0, like other lines the converter inserts, so font-size statistics and
    title guesses never count it; call this after headings and paragraphs are marked.
    """
    out = list(lines)
    for table in tables:
        inside = [i for i, line in enumerate(out) if not line.drop and _line_inside(line, table.bbox)]
        if not inside:
            continue
        for i in inside:
            out[i].drop = True
        left, bottom, right, top = table.bbox
        table_line = copy.copy(out[inside[0]])
        for name, value in (("text", table.markdown), ("top", top), ("end_top", bottom), ("left", left),
                            ("right", right), ("size", 0.0), ("drop", False), ("heading", 0),
                            ("para_break", True), ("bold", False), ("mono", False)):
            if hasattr(table_line, name):
                setattr(table_line, name, value)
        at = inside[0]
        out.insert(at, table_line)
        # The text after a table starts a new paragraph, or Markdown would read it as one more row.
        after = next((line for line in out[at + 1:] if not line.drop and line is not table_line), None)
        if after is not None:
            after.para_break = True
    return out


def _line_inside(line, bbox: tuple[float, float, float, float]) -> bool:
    left, bottom, right, top = bbox
    size = getattr(line, "size", 0.0) or 0.0
    if size <= 0:
        return False     # a line without a position (e.g. a heading inserted from the outline)
    middle = line.top - size / 2
    tolerance = size
    return (bottom - 1 <= middle <= top + 1 and line.left >= left - tolerance
            and line.right <= right + tolerance)


# --- characters → words → rows → segments ---------------------------------------------------------

def _words(textpage, page_text: str) -> list[_Word]:
    """The page's words with loose boxes (font ascent to descent, so a row's words share top and
    bottom). A few PDFium calls per word (its first and last character), not per character: PDFium
    puts a space in its text wherever characters stand apart, so a word is one run of its text."""
    to_char = pdfium_c.FPDFText_GetCharIndexFromTextIndex
    get_box = pdfium_c.FPDFText_GetLooseCharBox
    rect = pdfium_c.FS_RECTF()
    utf16 = None
    if _NON_BMP.search(page_text):   # PDFium counts text positions in UTF-16 units
        utf16, total = [], 0
        for ch in page_text:
            utf16.append(total)
            total += 2 if ord(ch) > 0xFFFF else 1
    words: list[_Word] = []
    for match in _WORD_RUN.finditer(page_text):
        start, end = match.start(), match.end() - 1
        first = to_char(textpage, utf16[start] if utf16 else start)
        last = to_char(textpage, utf16[end] if utf16 else end)
        if first < 0 or not get_box(textpage, first, rect):
            continue
        x0, bottom, top, x1 = rect.left, rect.bottom, rect.top, rect.right
        if last != first and last >= 0 and get_box(textpage, last, rect) and rect.right > x0:
            x1 = rect.right
        words.append(_Word(match.group().replace("\ufffe", "-"), x0, x1, bottom, top))
    return words


def _rows(words: list[_Word]) -> list[_Row]:
    """Words grouped into rows by vertical overlap, top to bottom, each cut into segments."""
    rows: list[_Row] = []
    for word in sorted(words, key=lambda w: -(w.top + w.bottom)):
        row = rows[-1] if rows else None
        if row is not None:
            overlap = min(row.top, word.top) - max(row.bottom, word.bottom)
            if overlap > 0.5 * min(row.height, word.height):
                row.words.append(word)
                continue
        rows.append(_Row([word], word.top, word.bottom, word.height))
    for row in rows:
        heights = sorted(w.height for w in row.words)
        row.height = heights[len(heights) // 2] or 1.0
        row.top = max(w.top for w in row.words)
        row.bottom = min(w.bottom for w in row.words)
        row.segments = _segments(sorted(row.words, key=lambda w: w.x0), row.height)
    return rows


def _segments(words: list[_Word], height: float) -> list[_Segment]:
    """Cut a row where the gap between words is a column gap; a run of numbers set with small
    gaps ("1,234 5,678") is still one cell per number; "$" joins the number after it."""
    groups: list[list[_Word]] = [[words[0]]]
    for word in words[1:]:
        if word.x0 - groups[-1][-1].x1 > COLUMN_GAP * height:
            groups.append([word])
        else:
            groups[-1].append(word)
    pieces: list[list[_Word]] = []
    for group in groups:
        texts = [w.text for w in group]
        if len(group) > 1 and all(_is_number(t) or t in "$€£¥%)" for t in texts):
            pieces.extend([w] for w in group)
        else:
            pieces.append(group)
    merged: list[list[_Word]] = []
    for piece in pieces:
        text = " ".join(w.text for w in piece)
        if merged and _UNIT.match(text) and _is_number(" ".join(w.text for w in merged[-1])):
            merged[-1] = merged[-1] + piece            # "12.5" "%" → "12.5%", "(100)" "bps" → "(100) bps"
        elif merged and _FOOTNOTE.match(text) and _is_number(" ".join(w.text for w in merged[-1])):
            merged[-1] = merged[-1] + piece            # "5,645" "(a)": a footnote mark, not a column
        elif merged and " ".join(w.text for w in merged[-1]) in ("$", "€", "£", "¥", "$(", "("):
            merged[-1] = merged[-1] + piece            # "$" "2,306,072" → "$2,306,072"
        else:
            merged.append(piece)
    return [_Segment(piece) for piece in merged]


def _tidy_number(text: str) -> str:
    """'$ 2,306,072' → '$2,306,072', '( 1,234 )' → '(1,234)', '12.5 %' → '12.5%'; other text as is."""
    if not _NUMBER.match(text):
        return text
    return re.sub(r"(?<=[$€£¥(])\s+|\s+(?=[)%])", "", text)


def _is_number(text: str) -> bool:
    return bool(_NUMBER.match(text) or _NIL.match(text))


def _is_year(segment: _Segment) -> bool:
    return bool(_YEAR.match(segment.text))


# --- rows → tables -------------------------------------------------------------------------------

def _label_and_values(row: _Row, zone: float | None = None) -> tuple[str, list[_Segment]]:
    """The row's label and the cells after it. Once the value columns are known (`zone`: where they
    start), everything left of them is label, even a number ("16)" ending a wrapped "(Note 16)");
    before that, the first segment is the label when it is text or a year before other numbers."""
    if zone is None:
        first, rest = row.segments[0], row.segments[1:]
        # A year heads the row when other numbers follow ("2015  16  (1)  647"), not in "2017  2016".
        if first.numeric and not (_is_year(first) and any(s.numeric and not _is_year(s) for s in rest)):
            return "", row.segments
        return first.text, rest
    label = [s for s in row.segments if s.x0 < zone - 2]
    return " ".join(s.text for s in label), row.segments[len(label):]


def _is_data_row(row: _Row) -> bool:
    """Numbers after an optional label, with at most short text cells among them. A row of years
    alone ("2017  2016") is a column header, not data."""
    if row.data is None:
        row.data = _looks_like_data(row)
    return row.data


def _looks_like_data(row: _Row) -> bool:
    _, values = _label_and_values(row)
    numbers = [s for s in values if s.numeric]
    if not numbers or _is_years_row(row):
        return False
    texts = [s for s in values if not s.numeric]
    if any(_CODE_CELL.match(s.text) for s in row.segments):
        return False
    return all(len(s.words) <= MAX_CELL_WORDS for s in texts) and len(texts) <= len(numbers)


def _is_years_row(row: _Row) -> bool:
    """A column header of years ("Years ended December 31,  2022  2021  2020  Change"): every number
    in it a year."""
    _, values = _label_and_values(row)
    numbers = [s for s in values if s.numeric]
    return bool(numbers) and all(_is_year(s) for s in numbers)


def _is_label_row(row: _Row) -> bool:
    """A row label alone ("Current assets:"), inside a table between rows of numbers, or a line of
    text (which ends the table if it runs over the value columns)."""
    return len(row.segments) == 1 and not row.segments[0].numeric


def _blocks(rows: list[_Row]) -> list[tuple[list[_Row], list[tuple[float, float]]]]:
    """Runs of rows of numbers (label lines among them) close enough to be one table, cut where a line
    of prose runs over the value columns, without rows that stand alone in a column (a page number);
    each with its value columns."""
    runs: list[list[_Row]] = []
    run: list[_Row] = []
    for row in rows:
        member = _is_data_row(row) or _is_label_row(row) or _is_years_row(row)
        close = run and run[-1].bottom - row.top <= ROW_GAP * max(row.height, run[-1].height)
        if member and (close or not run):
            run.append(row)
            continue
        runs.append(run)
        run = [row] if member else []
    runs.append(run)
    out = []
    for run in runs:
        run = _trim(run)
        if not run:
            continue
        zone = _layout(run)[1]
        piece: list[_Row] = []
        for row in run + [None]:
            if row is not None and not (_is_label_row(row) and row.x1 > zone + 2):
                piece.append(row)
                continue
            piece = _without_strays(_trim(piece))
            if sum(1 for r in piece if _is_data_row(r)) >= MIN_DATA_ROWS:
                out.append((piece, _layout(piece)[0]))
            piece = []
    return out


def _trim(block: list[_Row]) -> list[_Row]:
    """A table starts and ends with a row of numbers (leading labels come back in `_table`, if they
    sit in the label column)."""
    start = next((i for i, row in enumerate(block) if _is_data_row(row)), len(block))
    end = next((i for i in range(len(block) - 1, -1, -1) if _is_data_row(block[i])), -1)
    return block[start:end + 1]


def _without_strays(block: list[_Row]) -> list[_Row]:
    """Drop a first or last row whose one value sits in a column no other row uses, or left of all
    columns ("95", the page number under a table)."""
    for _ in range(3):
        data = [row for row in block if _is_data_row(row)]
        if len(data) <= MIN_DATA_ROWS:
            return block
        columns, zone, support = _layout(block)

        def stray(row: _Row) -> bool:
            values = _label_and_values(row, zone)[1]
            return not values or (len(values) == 1 and support[_column_of(values[0], columns)] == 1)

        if stray(data[-1]):
            block = _trim(block[:block.index(data[-1])])
        elif stray(data[0]):
            block = _trim(block[block.index(data[0]) + 1:])
        else:
            return block
    return block


def _layout(block: list[_Row]) -> tuple[list[tuple[float, float]], float, list[int]]:
    """Value columns as x-ranges, where they start (`zone`: labels end left of it) and how many rows
    have a value in each. Overlapping value segments are one column: right-aligned numbers share
    their right edge, a centred dash sits inside. The zone is the first column two rows use, so one
    number at the left ("16)" of a wrapped label) does not turn every label into a value."""
    data = [row for row in block if _is_data_row(row)]
    columns, support = _cluster([(i, s) for i, row in enumerate(data) for s in _label_and_values(row)[1]])
    used = [c for c, n in zip(columns, support) if n >= 2] or columns
    zone = used[0][0] if used else 0.0
    columns, support = _cluster([(i, s) for i, row in enumerate(data) for s in _label_and_values(row, zone)[1]])
    return columns, zone, support


def _cluster(cells: list[tuple[int, _Segment]]) -> tuple[list[tuple[float, float]], list[int]]:
    """Overlapping x-ranges merged into columns, and how many rows (the ints) have a cell in each."""
    columns: list[list[float]] = []
    rows_in: list[set[int]] = []
    for x0, x1, row in sorted((s.x0, s.x1, i) for i, s in cells):
        if columns and x0 < columns[-1][1] - 0.5:
            columns[-1][1] = max(columns[-1][1], x1)
            rows_in[-1].add(row)
        else:
            columns.append([x0, x1])
            rows_in.append({row})
    return [(a, b) for a, b in columns], [len(r) for r in rows_in]


def _support(data: list[_Row], columns: list[tuple[float, float]], zone: float | None) -> list[int]:
    """How many rows have a value in each column."""
    support = [0] * len(columns)
    if columns:
        for row in data:
            for k in {_column_of(s, columns) for s in _label_and_values(row, zone)[1]}:
                support[k] += 1
    return support


def _column_of(segment: _Segment, columns: list[tuple[float, float]]) -> int:
    """The column a segment overlaps most (the nearest one when it overlaps none). Columns are sorted
    and disjoint, so only those around the segment's right edge need a look."""
    last = bisect.bisect_left([a for a, _ in columns], segment.x1) - 1   # last column starting left of x1
    best, best_score = max(last, 0), -math.inf
    for k in range(max(last, 0), -1, -1):
        a, b = columns[k]
        overlap = min(b, segment.x1) - max(a, segment.x0)
        score = overlap if overlap > 0 else -min(abs(segment.x0 - b), abs(a - segment.x1))
        if score > best_score:
            best, best_score = k, score
        if b < segment.x0:
            break
    if last + 1 < len(columns):
        a, b = columns[last + 1]
        if -min(abs(segment.x0 - b), abs(a - segment.x1)) > best_score:
            best = last + 1
    return best


def _table(rows: list[_Row], block: list[_Row], columns: list[tuple[float, float]]) -> Table | None:
    if not columns or not _plausible(block, columns):
        return None
    zone = columns[0][0]
    start = rows.index(block[0])
    # Label rows right above the first row of numbers ("ASSETS", "Current assets:") belong to the body.
    while (start > 0 and _is_label_row(rows[start - 1]) and rows[start - 1].x1 < zone
           and _near(rows[start - 1], rows[start], ROW_GAP)
           and not rows[start - 1].segments[0].text.endswith(".")):
        start -= 1
        block = [rows[start]] + block
    header_rows = _header_rows(rows, start, columns)
    caption = _caption(rows, start - len(header_rows))
    body = _body(block, columns)
    header = _header(header_rows, columns)
    everything = header_rows + block
    bbox = (min(r.x0 for r in everything), min(r.bottom for r in everything),
            max(r.x1 for r in everything), max(r.top for r in everything))
    return Table(bbox=bbox, caption=caption, header=header, body=body)


def _plausible(block: list[_Row], columns: list[tuple[float, float]]) -> bool:
    """Numbers in columns, not a list that happens to end in numbers: a table of contents (one column
    of page numbers) and numbered prose are not tables."""
    zone = columns[0][0]
    data = [row for row in block if _is_data_row(row)]
    values = [s for row in data for s in _label_and_values(row, zone)[1] if s.numeric]
    money = sum(1 for s in values if _MONEY.search(s.text))
    if len(columns) == 1 and (len(data) < 3 or not money):
        return False     # one column of plain numbers: page numbers, a variable's value in a diagram
    if not money and (len(data) < 3 or not any(_label_and_values(row, zone)[0] for row in data)):
        return False     # a few bare numbers, or numbers without row labels: a diagram, a program's output
    cells = [s for row in data for s in _label_and_values(row, zone)[1]]
    if sum(1 for s in cells if not s.numeric) > 0.25 * len(cells):
        return False     # words among the values: a diagram or code ("countdown  n  3"), not figures
    # Most columns of a table are used by several rows; prose that happens to hold numbers scatters them.
    supported = sum(1 for n in _support(data, columns, zone) if n >= 2)
    return supported >= max(1, (len(columns) + 1) // 2)


def _near(upper: _Row, lower: _Row, gap: float) -> bool:
    return upper.bottom - lower.top <= gap * max(upper.height, lower.height)


def _header_rows(rows: list[_Row], start: int, columns: list[tuple[float, float]]) -> list[_Row]:
    """Rows right above the body whose text sits over the value columns: short labels, years. A row
    with text in the label column only ("In millions, except percentages and basis" above "points")
    belongs to the header when a header row sits above it."""
    zone = columns[0][0]
    left = rows[start].x0
    header: list[_Row] = []
    label_only: list[_Row] = []
    i = start - 1
    while i >= 0 and len(header) + len(label_only) < MAX_HEADER_ROWS:
        row = rows[i]
        below = label_only[0] if label_only else header[0] if header else rows[start]
        if not _near(row, below, HEADER_GAP):
            break
        if header and abs(row.height - header[0].height) > max(0.6, 0.08 * header[0].height):
            break      # a header is set in one size; a larger line above is the title, a running head
        over_columns = [s for s in row.segments if s.x1 > zone + 2]
        if not over_columns and header and len(row.segments) == 1 and len(row.segments[0].words) <= MAX_HEADER_WORDS:
            label_only.insert(0, row)
            i -= 1
            continue
        if not over_columns or any(len(s.words) > MAX_HEADER_WORDS for s in over_columns):
            break
        if any(s.numeric and not _is_year(s) for s in row.segments):
            break      # a row of numbers above is another table's last row
        if any(s.x0 <= left + 2 or (len(s.words) >= 3 and zone - s.x0 > 0.4 * (s.x1 - s.x0)) for s in over_columns):
            break      # a line from the labels' margin, or words mostly left of the values: prose, a title
        header[:0] = [row] + label_only
        label_only = []
        i -= 1
    return header


def _caption(rows: list[_Row], above: int) -> str:
    """Short title lines right above the table ("CONSOLIDATED BALANCE SHEETS", "(In millions)"). An
    introducing sentence ("The following table summarizes ...:") between title and table is passed
    over: it is no title, but the title may sit above it."""
    parts: list[_Row] = []
    below = rows[above] if above < len(rows) else None
    skipped = False
    i = above - 1
    while i >= 0 and below is not None and len(parts) < MAX_CAPTION_ROWS:
        row = rows[i]
        if not _near(row, below, HEADER_GAP if parts else ROW_GAP):
            break
        text = " ".join(s.text for s in row.segments)
        if not parts and not skipped and text.endswith(":") and len(text.split()) > 3:
            skipped, below, i = True, row, i - 1
            continue
        if (len(text.split()) > MAX_CAPTION_WORDS or text.endswith((".", ";", ",", ":"))
                or len(_LETTER.findall(text)) < 3 or _is_data_row(row)):
            break
        parts.insert(0, row)
        below, i = row, i - 1
    return " ".join(" ".join(s.text for s in row.segments) for row in parts)


def _header(header_rows: list[_Row], columns: list[tuple[float, float]]) -> list[str]:
    """One cell per column; a multi-line header is merged top to bottom, and a label spanning
    several columns ("Years Ended December 31,") goes into each of them."""
    cells: list[list[str]] = [[] for _ in range(len(columns) + 1)]
    zone = columns[0][0]
    for row in header_rows:
        over = [s for s in row.segments if s.x0 >= zone - 2 or s.x1 > zone + 2]
        # A row where some label reaches past its column groups columns ("Consumer & Community Banking",
        # "Total"); in other rows a label within one column names that column ("Non-Guarantor").
        groups = any(_within_column(s, columns) is None for s in over)
        # Each column's nearest segment of this row: a label widens only over columns it is nearest to.
        owners = [min(over, key=lambda seg: max(seg.x0 - (a + b) / 2, (a + b) / 2 - seg.x1, 0.0))
                  for a, b in columns] if over else []
        for segment in row.segments:
            if segment in over:
                spanned = _header_columns(segment, [o is segment for o in owners], columns, groups)
                homes = [_column_of(_Segment([word]), columns) for word in segment.words]
                spaced = all(b.x0 - a.x1 > 0.4 * row.height for a, b in zip(segment.words, segment.words[1:]))
                if len(spanned) > 1 and spaced and sorted(set(homes)) == spanned and len(homes) == len(spanned):
                    # words set apart, each over its own column ("$   %", "2017   2016"): one cell each
                    for word, k in zip(segment.words, homes):
                        cells[1 + k].append(word.text)
                    continue
                for k in spanned:
                    cells[1 + k].append(segment.text)
            else:
                cells[0].append(segment.text)
    return [" ".join(parts) for parts in cells]


def _within_column(segment: _Segment, columns: list[tuple[float, float]]) -> int | None:
    """The column whose extent holds the whole segment, if one does."""
    return next((k for k, (a, b) in enumerate(columns) if a - 2 <= segment.x0 and segment.x1 <= b + 2), None)


def _header_columns(segment: _Segment, owned: list[bool], columns: list[tuple[float, float]],
                    groups: bool = True) -> list[int]:
    """The columns a header segment names: those it mostly covers, widened to the widest run of
    columns it is centred over ("Three Months Ended" over four columns, though it reaches only into
    the middle two) that no other segment of its row is nearer to (`owned`). A year names one column, and so
    does a label within one column ("Non-Guarantor" over "Subsidiaries"), unless its row groups
    columns (`groups`) or it names a period: "Years Ended" centred over three columns sits within the
    middle one."""
    home = _column_of(segment, columns)
    single = not groups and not _PERIOD.search(segment.text) and _within_column(segment, columns) is not None
    if _is_year(segment) or len(columns) == 1 or single:
        return [home]
    covered = [k for k, (a, b) in enumerate(columns) if min(b, segment.x1) - max(a, segment.x0) >= 0.5 * (b - a)]
    first, last = min(covered + [home]), max(covered + [home])
    centres = [(a + b) / 2 for a, b in columns]
    pitch = statistics.median(b - a for a, b in zip(centres, centres[1:]))
    # Numbers are right-aligned and labels centred, so "centred" is loose: more so for a wide label.
    tolerance = max(3.0, 0.15 * pitch, 0.1 * (segment.x1 - segment.x0))
    middle = (segment.x0 + segment.x1) / 2
    best = (first, last)
    for i in range(first, -1, -1):
        if not owned[i] and i < first:
            break
        for j in range(last, len(columns)):
            if not owned[j] and j > last:
                break
            if j - i > best[1] - best[0] and abs((columns[i][0] + columns[j][1]) / 2 - middle) <= tolerance:
                best = (i, j)
    return list(range(best[0], best[1] + 1))


def _body(block: list[_Row], columns: list[tuple[float, float]]) -> list[list[str]]:
    """One list of cells per row; a label wrapped over two lines is joined into the row with numbers."""
    zone = columns[0][0]
    out: list[list[str]] = []
    empty = [""] * len(columns)
    left = min(row.x0 for row in block)
    widest = max((row.segments[0].x1 for row in block if row.segments[0].x1 <= zone + 2), default=left)
    pending, pending_full = "", False     # a label line waiting for its continuation
    for row in block:
        label, values = _label_and_values(row, zone)
        if not values:
            if pending:
                out.append([pending] + empty)
            # a label line as wide as the widest label was wrapped, whatever its last word
            pending, pending_full = label, bool(label) and row.x1 - left >= 0.85 * (widest - left)
            continue
        if pending:
            if _continues(pending, label, pending_full):
                label = f"{pending} {label}".strip()
            else:
                out.append([pending] + empty)
        pending = ""
        cells = list(empty)
        for segment in values:
            k = _column_of(segment, columns)
            cells[k] = f"{cells[k]} {segment.text}".strip()
        out.append([label] + cells)
    if pending:
        out.append([pending] + empty)
    return out


def _continues(previous: str, label: str, previous_full: bool = False) -> bool:
    """Whether a label line goes on in the next row's label ("Common stock, ...; 600,834 shares
    issued;" + "491,262 and 494,254 shares outstanding"), rather than heading a group ("Current assets:")."""
    if not label or previous.endswith(":"):
        return False
    return (previous_full or label[0].islower() or label[0].isdigit()
            or previous.endswith((",", ";", "-", " and", " of", " or", " at", " in", " to", " for", " the")))


def render_markdown(header: list[str], rows: list[list[str]]) -> str:
    """A Markdown table: the header row, the |---| rule, one line per row; '|' in a cell is escaped."""
    def line(cells: list[str]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"
    width = len(header)
    return "\n".join([line(header), "|" + "---|" * width] + [line(row) for row in rows])
