"""Tables and lists a PDF gives as short lines, and the captions that name them.

A manual's table often has no ruling lines and no numbers to align, so it reaches the text as short lines
("字符 说明" / "- 普通文件" / "d 目录" …, "Distribution R name additional arguments" / "beta beta shape1, shape2"
…), with its caption on a line of its own ("Table 1.4: “ls -l”输出的第一个字符列表"). Read as prose, those lines
have no sentence end, so every row and the next real sentence became one long "sentence" that no question
matched well and no answer could show whole. Here a run of such lines is one unit, kept with its caption —
the caption names what the rows hold, the rows hold the answer.

A row line is short against the full lines of its passage (CJK characters count double, as they are printed)
and does not end a sentence; wrapped prose runs to the full width except its last line, so three short lines
in a row are not prose.
"""
from __future__ import annotations

import re
import unicodedata

MIN_ROWS = 3                 # two short lines are a heading and a line, or a wrapped sentence's end
MIN_ROWS_AT_START = 2
ROW_WIDTH_SHARE = 0.7        # a row is at most this share of the passage's full line (passage_width); wrapped
                             # prose fills its lines but the last, a table's widest row may reach two thirds
MIN_WIDE_LINE = 40           # a passage whose lines are all narrower than this has no width to compare with
RUN_TOGETHER_SHARE = 1.4     # a line wider than this share of the median wide line is two lines run together
GROUP_MAX_CHARS = 360        # a longer table is shown in groups of rows, each under the table's first line

# What starts a caption, in the languages the books are in; the number is required ("Table of contents" is not one).
CAPTION_WORDS = ("Table", "Tab.", "Figure", "Fig.", "Listing", "表", "图", "圖")
CAPTION = re.compile(r"^\s*(?:" + "|".join(re.escape(w) for w in CAPTION_WORDS) +
                     r")\s*\d+(?:[.\-–]\d+)*\s*[:：.]?\s*\S")
_SENTENCE_END = ("。", "！", "？", ".", "!", "?", ";", "；", ":", "：", ",", "，", "、")


def width(line: str) -> int:
    """Printed width: East Asian wide characters take two columns."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in line.strip())


def passage_width(text: str) -> int:
    """The width of the passage's full lines: its third-widest line's (the widest may be two lines the PDF ran
    together; most lines may be rows, a table filling most of the passage), lines far wider than the passage's
    typical wide line left out (a manual's entries each ran two lines together, three of them in a passage read
    its ordinary 80-column lines as a table's rows)."""
    widths = sorted((width(line) for line in text.split("\n") if line.strip()), reverse=True)
    wide = [w for w in widths if w >= MIN_WIDE_LINE]
    if wide:
        typical = wide[len(wide) // 2]
        widths = [w for w in widths if w <= RUN_TOGETHER_SHARE * typical]
    return widths[min(2, len(widths) - 1)] if widths else 0


def is_caption(line: str) -> bool:
    return bool(CAPTION.match(line))


def ends_sentence(line: str) -> bool:
    """Whether the line ends a sentence (or holds a Chinese one's end): prose, not a row."""
    stripped = line.strip()
    return stripped.endswith(_SENTENCE_END) or "。" in stripped


def _is_row(line: str, widest: int) -> bool:
    stripped = line.strip()
    return bool(stripped) and width(stripped) <= ROW_WIDTH_SHARE * widest and not ends_sentence(stripped) \
        and not is_caption(stripped)


def row_runs(lines: list[str], widest: int, passage_start: bool = False) -> list[tuple[int, int]]:
    """[start, end) line indices of the runs of row lines, each at least MIN_ROWS long (MIN_ROWS_AT_START when
    `lines` open the passage)."""
    if widest < MIN_WIDE_LINE:
        return []
    runs, start = [], None
    for i, line in enumerate(lines + [""]):
        if i < len(lines) and _is_row(line, widest):
            start = i if start is None else start
            continue
        # a passage that starts inside a table (chunks overlap and cut anywhere) may hold only its last two rows
        if start is not None and i - start >= (MIN_ROWS_AT_START if start == 0 and passage_start else MIN_ROWS):
            runs.append((start, i))
        start = None
    return runs


def blocks(lines: list[str], widest: int, passage_start: bool = False) -> list[tuple[int, int]]:
    """Row runs with the caption line right above or below each, if there is one: [start, end) line indices."""
    out = []
    for start, end in row_runs(lines, widest, passage_start):
        if start > 0 and is_caption(lines[start - 1]) and not (out and out[-1][1] == start):
            start -= 1
        elif end < len(lines) and is_caption(lines[end]):
            end += 1
        out.append((start, end))
    return out


def groups(rows: list[str]) -> list[list[int]]:
    """Indices of `rows` cut into groups of at most GROUP_MAX_CHARS (a group has at least one row)."""
    out: list[list[int]] = [[]]
    used = 0
    for i, row in enumerate(rows):
        if out[-1] and used + len(row) > GROUP_MAX_CHARS:
            out.append([])
            used = 0
        out[-1].append(i)
        used += len(row) + 1
    return out


_MARKDOWN_LINE_START = re.compile(r"^(?:([-+*#>=])|(\d+)([.)]))(?=\s|$)")


def as_markdown(text: str) -> str:
    """A unit's rows one a line (hard breaks), a row that would start a Markdown list, heading or quote
    escaped: the rows are the document's text, shown as it is. A Markdown table (rows in pipes) is left as it is."""
    if text.lstrip().startswith("|"):
        return text

    def escaped(m: re.Match) -> str:       # CommonMark escapes the mark: "\- item", "1\. item"
        return "\\" + m.group(1) if m.group(1) else m.group(2) + "\\" + m.group(3)

    return "  \n".join(_MARKDOWN_LINE_START.sub(escaped, line.strip()) for line in text.split("\n") if line.strip())
