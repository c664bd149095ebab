"""Which parts of the retrieved passages answer the question, and whether the documents answer it at all.

Retrieval ranks whole chunks; a person reads sentences. This module splits the best chunks into units
(a sentence, a code block, a table row with its header), scores each unit as an answer to the question
and gives one evidence strength in 0..1. Below `ANSWER_MIN_SUPPORT` the honest answer is "not in your
documents". The same measures check a composed answer: each sentence that cites [n] must be supported
by passage n.

A unit's score mixes two views, because neither is enough alone:
- lexical: the IDF-weighted share of the question's content terms the unit contains. The IDF comes
  from the person's own documents, so a question term that appears in none of them ("mercury" asked
  of a Python book) weighs most and, missing, pulls the score down — the strongest sign that the
  documents do not hold the answer. Chinese is matched on jieba words and on character bigrams.
- semantic: the embedder's cosine of question and unit, when the embedder knows the language.
Small, general cues adjust it: a definition ("X is a …", "X 是 …") for a "what is" question, a number
for a "how much" question; questions and exercises in the text ("Write a function that …") answer
nothing; tables of contents and front matter are never evidence.
"""
from __future__ import annotations

import math
import os
import re
import unicodedata
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from core.text import (CJK_CHAR, GLUED_WORD_MAX_ZIPF, KIND_WORDS, STOPWORDS, bm25_tokens, compound_parts,
                       detect_language, period_parts, search_tokens, with_fiscal_years)
from core.text import stem as snowball_stem
from rag.abbreviations import other_forms
from rag.command_lines import HOST_PROMPT, is_command_line, is_prompted_command
from rag.injection import is_instruction
from rag.footnotes import footnote_spans, in_footnote
from rag.syntax import holds_syntax, names_but_never_calls, syntax_patterns, writes_symbols
from rag.outline import heading_text, split_at_headings
from rag.references import is_reference_list
from rag import rows as text_rows
from rag.statements import STATEMENTS, named_statements, under_statement
from rag.types import SearchHit

# -- units -------------------------------------------------------------------------------------------

# A full stop ends a sentence, but not an abbreviation's: "e.g. Python", "(p. 7)", "see Fig. 3", "No. 5" (a
# sentence of the TeX Live guide was cut at "(p." and shown as two paragraphs with its citation between).
_NOT_AN_END = "".join(rf"(?<!\b{a})" for a in ("e.g.", "i.e.", "cf.", "vs.")).replace(".", r"\.")
_BEFORE_A_NUMBER = "".join(rf"(?<!\b{a})" for a in ("p.", "pp.", "Fig.", "fig.", "No.", "no.", "Eq.", "Sec.", "ch.",
                                                      "Ch.", "vol.", "Vol.")).replace(".", r"\.")
_SENTENCE_END = re.compile(rf"(?<=[.!?]){_NOT_AN_END}(?:{_BEFORE_A_NUMBER}\s+(?=[\"'(\[A-Z0-9])|\s+(?=[\"'(\[A-Z]))"
                           r"|(?<=[。！？；])(?![⁰¹²³⁴⁵⁶⁷⁸⁹])|(?<=[。！？；][⁰¹²³⁴⁵⁶⁷⁸⁹])")
# (a footnote's mark after a Chinese full stop, "以保证安全。⁵", stays with the sentence it marks)
# A prompt the book's sessions are typed at, besides Python's >>>: a shell's "$ " and root's "# " (escaped "\# " by
# the converter, as a heading would be), R's "> " before an assignment, a call, an index or a comment.
PROMPT_LINE = re.compile(r"^\s*(?:>>>|\$\s+[a-z./~]|\\?#\s+[a-z./~]|>\s+(?:[\w.$]+\s*(?:<<?-|=|\(|\[|\$)|#|\?))")
_ESCAPED_HASH = re.compile(r"^(\s*)\\#", re.MULTILINE)
_CODE_LINE = re.compile(
    r"^\s*(>>>|\.\.\.\s|def |class |return\b|import |from \S+ import|for .+:\s*$|while .+:\s*$|if .+:\s*$|"
    r"elif |else:|try:|except|print\(|%\s|[A-Za-z_][\w.]*(?:\[[^\]]*\])?\s*(?:[-+*/%]|//|\*\*)?=[^=]|[A-Za-z_][\w.]*\(.*\)\s*$|#|\w+\[.*\]\s*=)")
_HEADING = re.compile(r"^ {0,3}#{1,6}\s+\S")     # indented four spaces it is code: "    # check the suits"
# A numbered heading the converter kept as text ("A.2.2. My program hangs.", "5.1.2 RMSNorm"): a short paragraph of
# its own that starts with a section number of two or more parts
_NUMBERED_HEADING = re.compile(r"^\s*(?:[A-Z]|\d{1,2})(?:\.\d{1,2}){1,3}\.?\s+[A-Z\u4e00-\u9fff][^\n]{0,70}$")
_FENCED = re.compile(r"^[ \t]*```[^\n]*\n(.*?)^[ \t]*```[ \t]*$", re.MULTILINE | re.DOTALL)
_TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}")
# Dotted leaders or a title followed by a page number: a table of contents line. A number after a colon or an
# equals sign is a value ("Number of different words: 7214"), not a page.
# a contents line's dots leading to its page, whatever the unit's length, and where the sentence splitter left its
# page number to the next unit ("72 E.3 Optimal LP solution . . . . . ."); an ellipsis has three
_DOT_LEADER = re.compile(r"(?:\.\s?){5,}\s*(?:\d+\b|$)")
_TOC_LINE = re.compile(r"(\.\s?){4,}\s*\d+\s*$|(?<![:=：])\s\d{1,4}\s*$")
FRONT_MATTER = re.compile(
    r"^(contents|table of contents|目录|目 录|index|索引|acknowledg|preface|foreword|copyright|版权|"
    r"contributor|about the author|colophon|bibliography|references|参考文献|参考资料|致谢|前言|序)", re.IGNORECASE)
_EXERCISE = re.compile(r"^\s*(exercises?\b|练习|习题|write a |write an |as an exercise|modify |rewrite )",
                       re.IGNORECASE)


def paragraph_span(text: str, start: int) -> tuple[int, int]:
    """[begin, end) of the paragraph (of a chunk's text, paragraphs parted by a blank line) holding offset `start`."""
    before = text.rfind("\n\n", 0, start)
    after = text.find("\n\n", start)
    return (before + 2 if before != -1 else 0), (after if after != -1 else len(text))


def entry_head(text: str, start: int) -> str:
    """The opening characters of the paragraph (of a chunk's text) holding offset `start`: where a list of entries
    names the entry a sentence belongs to."""
    return text[paragraph_span(text, start)[0]:].lstrip()[:ENTRY_HEAD_CHARS]


def in_entry_of(text: str, start: int, name: str) -> bool:
    """Whether offset `start` of a chunk's text lies in the entry of a name written in symbols: a paragraph whose
    head writes it ("* ($*) Expands to …" for "$*"). Never for a name in words."""
    return writes_symbols(entry_head(text, start), name)


def is_exercise(text: str) -> bool:
    """A unit that sets the reader a task ("Exercise 11.2. Read the documentation …"): it asks, it does not explain."""
    return bool(_EXERCISE.match(text))


@dataclass
class Unit:
    start: int          # offsets in the chunk's text
    end: int
    kind: str           # "sentence" | "code" | "table"
    text: str           # what is shown (a table row carries its header rows)


def split_units(text: str, context: str = "") -> list[Unit]:
    """The chunk as answer units, in order: code blocks whole, table rows with their header, the rest
    as sentences (line breaks inside a paragraph are the PDF's, not the author's). `context` is the
    chunk's `context_prefix`: the header of the table it starts inside of."""
    units: list[Unit] = []
    pos = 0
    header = "\n".join(line for line in context.split("\n") if _TABLE_ROW.match(line) or _TABLE_RULE.match(line))
    widest = text_rows.passage_width(text)
    for fence in list(_FENCED.finditer(text)) + [None]:   # Markdown code fences are code, whole
        end = fence.start() if fence else len(text)
        units.extend(_paragraph_units(text[pos:end], pos, header if pos == 0 else "", widest))
        if fence:
            units.append(Unit(fence.start(), fence.end(), "code", fence.group(1).strip("\n")))
            pos = fence.end()
    return _page_breaks_joined(_captions_joined(units, text), text)


# A sentence a page break cut in two: the PDF's page (or column) ends mid-sentence and the converter puts a blank
# line there ("By default all variables (except binary" / "ones) have no lower bound"). The first part ends with no
# sentence's end; the second goes on in lower case, or (Chinese) after a comma.
_CUT_ENGLISH = re.compile(r"[A-Za-z0-9,;)\-]$")
_GOES_ON_ENGLISH = re.compile(r"^[a-z]")
# A part ending in a word no sentence ends with goes on whatever the next begins with: "For more complex music, you
# must introduce the lyrics in a" / "Lyrics context using \new Lyrics …" (LilyPond's learning manual, a name)
_CUT_MID_PHRASE = re.compile(r"\b(?:a|an|the|of|to|in|on|at|by|for|from|with|into|and|or|than|is|are)$", re.IGNORECASE)
_CUT_CHINESE = re.compile(r"[\u4e00-\u9fff][，、]$")
_GOES_ON_CHINESE = re.compile(r"^[\u4e00-\u9fff]")


def _page_breaks_joined(units: list[Unit], text: str) -> list[Unit]:
    """Two sentences with only a blank line between them that are one sentence a page break cut: one unit."""
    out: list[Unit] = []
    for unit in units:
        last = out[-1] if out else None
        between = text[last.end:unit.start] if last else ""
        if last and last.kind == unit.kind == "sentence" and "\n\n" in between and not between.strip() and (
                _CUT_ENGLISH.search(last.text) and _GOES_ON_ENGLISH.match(unit.text) or
                _CUT_MID_PHRASE.search(last.text) and unit.text[:1].isalpha() or
                _CUT_CHINESE.search(last.text) and _GOES_ON_CHINESE.match(unit.text)):
            out[-1] = Unit(last.start, unit.end, "sentence", f"{last.text} {unit.text}" if unit.text[:1].isascii()
                           else f"{last.text}{unit.text}")
            continue
        out.append(unit)
    return out


def units_after(unit: Unit, text: str, context: str = "") -> list[Unit]:
    """The units that follow `unit` in its chunk up to the next heading: what goes on in the same section
    (an explanation's next sentences, a list after "the steps are:"), never the next section's text."""
    following = [u for u in split_units(text, context) if u.start >= unit.end]
    kept: list[Unit] = []
    pos = unit.end
    for u in following:
        if _heading_between(text, pos, u.start):
            break
        kept.append(u)
        pos = u.end
    return kept


def units_before(unit: Unit, text: str, context: str = "") -> list[Unit]:
    """The units that precede `unit` in its chunk back to the heading above it, in order: what came before it
    in the same section (where the example it is part of begins)."""
    preceding = [u for u in split_units(text, context) if u.end <= unit.start]
    kept: list[Unit] = []
    pos = unit.start
    for u in reversed(preceding):
        if _heading_between(text, u.end, pos):
            break
        kept.insert(0, u)
        pos = u.start
    return kept


def section_around(text: str, start: int, end: int) -> str:
    """The text of the section the span [start, end) of a chunk is in: from the heading above it to the next one."""
    lines = text.split("\n")
    offsets, pos = [], 0
    for line in lines:
        offsets.append(pos)
        pos += len(line) + 1
    headings = [at for at, line in zip(offsets, lines) if _HEADING.match(line) or _NUMBERED_HEADING.match(line)]
    first = max((at for at in headings if at <= start), default=0)
    last = min((at for at in headings if at >= end), default=len(text))
    return text[first:last]


def _heading_between(text: str, start: int, end: int) -> bool:
    return any(_HEADING.match(line) or _NUMBERED_HEADING.match(line) for line in text[start:end].split("\n"))


def _paragraph_units(text: str, base: int, header: str = "", widest: int = 0) -> list[Unit]:
    units: list[Unit] = []
    paragraphs = list(re.finditer(r"(?:[^\n]|\n(?!\s*\n))+", text))
    for n, para in enumerate(paragraphs):
        body, offset = para.group(), base + para.start()
        if _NUMBERED_HEADING.match(body):
            continue              # a heading answers nothing
        lines = body.split("\n")
        if sum(1 for line in lines if _TABLE_ROW.match(line)) >= 2 or (header and offset == 0 and _TABLE_ROW.match(lines[0])):
            units.extend(_table_units(body, offset, header if offset == 0 else ""))
            continue
        runs = _line_runs(body)
        if len(runs) == 1 and not runs[0][0] and _captions_rows(body, paragraphs[n - 1:n] + paragraphs[n + 1:n + 2]):
            lead = len(body) - len(body.lstrip("\n"))     # the blank line's end the paragraph starts with
            lines = body[lead:].rstrip("\n").split("\n")
            units.extend(_row_units(lines, [offset + lead + at for at in _line_starts(lines)]))
            continue
        for is_code, start, end in runs:
            if _HEADING.match(body[start:end]):
                continue          # headings are in the chunk's heading path; a heading answers nothing
            if is_code:      # the converter escaped a line's "#" (a root prompt, a comment) lest it be a heading
                code = _ESCAPED_HASH.sub(r"\1#", body[start:end].strip("\n"))
                units.append(Unit(offset + start, offset + end, "code", code))
            else:
                units.extend(_prose_units(body[start:end], offset + start, widest))
    return units


def _prose_units(body: str, offset: int, widest: int) -> list[Unit]:
    """Sentences, with the tables and lists the PDF gave as short lines (`rag.rows`) kept whole, their caption
    with them. A caption that opens the paragraph is a unit of its own (the table it names may be just above)."""
    lines = body.split("\n")
    starts = _line_starts(lines)
    blocks = text_rows.blocks(lines, widest, passage_start=offset == 0)
    top = next((i for i, line in enumerate(lines) if line.strip()), 0)
    if len(lines) > top + 1 and text_rows.is_caption(lines[top]) and not (blocks and blocks[0][0] <= top):
        blocks.insert(0, (top, top + 1))
    units: list[Unit] = []
    pos = 0
    for first, last in blocks:
        units.extend(_sentences(body[pos:starts[first]], offset + pos))
        units.extend(_row_units(lines[first:last], [offset + at for at in starts[first:last]]))
        pos = starts[last]
    units.extend(_sentences(body[pos:], offset + pos))
    return units


def _captions_rows(body: str, neighbours: list[re.Match]) -> bool:
    """A paragraph of two lines or more, none ending a sentence, with a caption line alone as the paragraph just
    above or below it: that caption's table, however wide its rows ("main 67672 遵从 Debian 自由软件指导方针（DFSG），
    并且不依赖于 / non-free …" above "Table 2.3: Debian 归档区域（area）列表"). Read as prose, its rows ran into one
    "sentence" and the table's last rows into another."""
    lines = [line for line in body.split("\n") if line.strip()]
    return len(lines) >= 2 and not any(text_rows.ends_sentence(line) for line in lines) and any(
        "\n" not in m.group().strip() and text_rows.is_caption(m.group().strip()) for m in neighbours)


def _row_units(lines: list[str], starts: list[int]) -> list[Unit]:
    """A row block (its lines, and where each starts) as table units: whole, or in groups of rows under the block's
    first line and caption."""
    if len(lines) == 1:      # a caption alone: the table it names may be next to it (see _captions_joined)
        return [Unit(starts[0], starts[0] + len(lines[0]), "sentence", " ".join(lines[0].split()))]
    caption = next((i for i in (0, len(lines) - 1) if text_rows.is_caption(lines[i])), None)
    rows = [i for i in range(len(lines)) if i != caption]
    groups = text_rows.groups([lines[i] for i in rows])
    units = []
    for n, group in enumerate(groups):
        members = [rows[g] for g in group]
        shown = [lines[i] for i in members]
        if n > 0:
            shown.insert(0, lines[rows[0]])
        if caption == 0:
            shown.insert(0, lines[caption])
        elif caption is not None:
            shown.append(lines[caption])
        if caption is not None and n in (0, len(groups) - 1):
            members = sorted({*members, caption})
        units.append(Unit(starts[members[0]], starts[members[-1]] + len(lines[members[-1]]), "table",
                          "\n".join(" ".join(line.split()) for line in shown)))
    return units


def _row_table(unit: Unit) -> bool:
    """A table of short lines (rag.rows), not a Markdown table's row."""
    return unit.kind == "table" and not _TABLE_ROW.match(unit.text)


def _lone_caption(unit: Unit, text: str) -> bool:
    """A caption line standing as a unit of its own."""
    return unit.kind == "sentence" and text_rows.is_caption(unit.text) and "\n" not in text[unit.start:unit.end]


def _captions_joined(units: list[Unit], text: str) -> list[Unit]:
    """A caption standing alone next to a row table (white space between) joins it: "Table 1.4: …" under its rows."""
    out: list[Unit] = []
    for unit in units:
        last = out[-1] if out else None
        if last and not text[last.end:unit.start].strip() and (
                _row_table(last) and _lone_caption(unit, text) or _lone_caption(last, text) and _row_table(unit)):
            out[-1] = Unit(last.start, unit.end, "table", f"{last.text}\n{unit.text}")
            continue
        out.append(unit)
    return out


# A line that reads as prose: a capitalised word and two lower-case ones ("The loop condition is True"), or Chinese.
_PROSE_START = re.compile(r"^\s*[A-Z][a-z]+\s+[a-z]+\s+[a-z]+|.*[\u4e00-\u9fff]")


def _prints_output(line: str) -> bool:
    """A line after a prompt that is what the command printed ("6", "-rw-r--r-- 1 root root 2761 … /etc/passwd"),
    not the prose that goes on after the session."""
    text = line.strip()
    if text in ("...", "…"):          # the part of a traceback a book leaves out
        return True
    return bool(text) and not text.endswith((".", ":", "。", "：")) and not _PROSE_START.match(text)


def _is_prompt(line: str) -> bool:
    """A line typed at a prompt: Python's, a shell's or R's (PROMPT_LINE), one with its host before it, or a command
    after a bare "> " (rag.command_lines)."""
    return bool(PROMPT_LINE.match(line) or HOST_PROMPT.match(line)) or is_prompted_command(line)


def _line_runs(body: str) -> list[tuple[bool, int, int]]:
    """The paragraph cut into runs of code lines and prose lines: PDFs put a book's examples
    (`>>> len(fruit)` and its output `6`) inside the paragraph that explains them."""
    runs: list[tuple[bool, int, int]] = []
    pos, previous_prompt = 0, False
    for line in body.split("\n"):
        end = pos + len(line)
        if _HEADING.match(line):
            runs.append((False, pos, end))
            runs.append((None, end, end))     # a heading ends the run before it
            pos, previous_prompt = end + 1, False
            continue
        prompt = _is_prompt(line)
        # a line indented under a code line is the code's body ("        break" under "if line == 'done':")
        indented_under_code = bool(runs) and runs[-1][0] is True and line[:1] in (" ", "\t") and bool(line.strip())
        code = prompt or indented_under_code or bool(_CODE_LINE.match(line)) or is_command_line(line) or (
            previous_prompt and _prints_output(line))
        previous_prompt = code and (prompt or previous_prompt)
        if runs and runs[-1][0] == code:
            runs[-1] = (code, runs[-1][1], end)
        else:
            runs.append((code, pos, end))
        pos = end + 1
    # a lone code-looking line inside prose is prose ("x = 5 is an assignment"), unless it is a prompt or a command
    out: list[tuple[bool, int, int]] = []
    for code, s, e in runs:
        if e <= s:
            continue
        line = body[s:e]
        code = bool(code) and ("\n" in line or _is_prompt(line) or is_command_line(line))
        if out and not code and not out[-1][0] and not _HEADING.match(body[out[-1][1]:out[-1][2]]) \
                and not _HEADING.match(body[s:e]):
            out[-1] = (False, out[-1][1], e)      # prose on both sides of a line demoted to prose: one run
        else:
            out.append((code, s, e))
    return out


def _line_starts(lines: list[str]) -> list[int]:
    """Where each of `lines` (a text split at its line breaks) starts in that text, and where the text ends + 1."""
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    return starts


def _sentences(body: str, offset: int) -> list[Unit]:
    """Prose as sentences; its line breaks are the PDF's, not the author's, so they become spaces."""
    units, pos = [], 0
    for m in list(_SENTENCE_END.finditer(body)) + [None]:
        end = m.start() if m else len(body)
        piece = body[pos:end]
        if piece.strip():
            lead = len(piece) - len(piece.lstrip())
            units.append(Unit(offset + pos + lead, offset + end, "sentence", " ".join(piece.split())))
        pos = m.end() if m else len(body)
    return units


def _table_units(body: str, offset: int, inherited: str = "") -> list[Unit]:
    """Each data row of a Markdown table, shown under its header so the row can be read alone. A table
    the chunk starts inside of has no header in the chunk: it is `inherited` from the chunk's context."""
    lines = body.split("\n")
    starts = _line_starts(lines)
    rule = next((i for i, line in enumerate(lines[:3]) if _TABLE_RULE.match(line)), None)
    header = [i for i in range(rule + 1) if _TABLE_ROW.match(lines[i]) or _TABLE_RULE.match(lines[i])] if rule is not None else []
    head_text = "\n".join(lines[i] for i in header) if header else inherited
    units = []
    for i, line in enumerate(lines):
        if i in header or not line.strip() or _TABLE_RULE.match(line):
            continue
        shown = f"{head_text}\n{line}" if head_text and _TABLE_ROW.match(line) else line
        units.append(Unit(offset + starts[i], offset + starts[i] + len(line),
                          "table" if _TABLE_ROW.match(line) else "sentence", shown.strip()))
    return units


def names_only_its_document(text: str, name_letters: str) -> bool:
    """Whether a line says nothing but its document's name ("AMERICAN WATER WORKS COMPANY, INC." on a filing's
    cover or running head): it matches every question about the company and answers none. `name_letters` is
    the document's file name and title in lower-case letters alone (AMERICANWATERWORKS_2022_10K.pdf)."""
    words = re.findall(r"[a-z]+", text.lower())
    return bool(words) and not CJK_CHAR.search(text) and all(w in KIND_WORDS or w in name_letters for w in words)


_MARKUP = re.compile(r"<[^>]{1,300}>|!\[[^\]]*\]\([^)]*\)")


def is_markup(text: str) -> bool:
    """A unit that is mostly HTML or image markup (a Markdown file's `<div align='center'><img …>`): it says
    nothing a person can read."""
    stripped = _MARKUP.sub("", text)
    return len(stripped.strip()) < 0.4 * len(text.strip())


_WORD_OR_HANZI = re.compile(r"[^\W\d_]{2,}|[\u4e00-\u9fff]")
WORDLESS_WORD_SHARE = 0.4


def is_wordless(unit: Unit) -> bool:
    """A prose or table unit that is not words: a font's code chart ("00 01 02 … 1F", "✁ ✂ ✃ …", "€ ϒ ′ ≤ … Figure
    3-5: Symbol and its one and only encoding"), under WORDLESS_WORD_SHARE of its letters and symbols in words
    of two letters or more (or Chinese characters). Nothing in it reads as an answer, yet the embedder puts such
    strings near any question ("表格里想合并几个单元格" met a hex row at 0.80). Code keeps its place: "x = 5" is an
    example; so does a row of numbers alone."""
    if unit.kind == "code":
        return False
    # letters and symbols count, not punctuation or currency signs: "Revenue $ 1,234 $ 5,678" is a table row
    letters_and_symbols = sum(1 for ch in unit.text if unicodedata.category(ch)[0] in "LSC" and
                              unicodedata.category(ch) not in ("Sc", "Cc") and not ch.isspace())
    return sum(map(len, _WORD_OR_HANZI.findall(unit.text))) < WORDLESS_WORD_SHARE * letters_and_symbols


# A line of two to six capitalised words without a full stop ("Coordinate System", "Using Paragraph Styles"):
# a subheading the outline did not catch.
_TITLE_LINE = re.compile(r"(?:[A-Z][\w'’-]*|of|and|the|to|in|for|a|an|with|on|by)"
                         r"(?:\s+(?:[A-Z][\w'’-]*|of|and|the|to|in|for|a|an|with|on|by)){1,5}")


def _folded_heading(text: str) -> str:
    """A heading as compared with a line: without its number and markup, in lower case."""
    return " ".join(heading_text(text).lower().split())


def is_front_matter(hit: SearchHit) -> bool:
    """A table of contents, index, acknowledgements or reference list: never evidence for an answer."""
    if any(FRONT_MATTER.match(h.strip()) for h in hit.chunk.heading_path) or is_reference_list(hit.chunk.text):
        return True
    lines = [line for line in hit.chunk.text.splitlines() if line.strip()]
    toc = [line for line in lines if _TOC_LINE.search(line) and not _TABLE_ROW_NUMBER.search(line)]
    # a contents page names a different title on each line; lines that differ only in their number are a program's
    # output or a table ("The value of i is 5", "… is 4", …)
    titles = {_TRAILING_NUMBER.sub("", line).strip() for line in toc}
    return len(lines) >= 4 and len(toc) >= 0.5 * len(lines) and len(titles) >= CONTENTS_DISTINCT_TITLES * len(toc)


# A number inside a line, followed by a word: a table row ("www (http) 80 https 443", "imap2 143 imaps 993"), which
# ends in a number as a contents line ends in its page; an index line's numbers are followed by commas.
_TABLE_ROW_NUMBER = re.compile(r"\S\s+\d+\s+[^\W\d_]")
_TRAILING_NUMBER = re.compile(r"[\s.·]*\d+\s*$")
CONTENTS_DISTINCT_TITLES = 0.6     # share of a contents page's lines whose titles differ


# -- terms -------------------------------------------------------------------------------------------

def stem(term: str) -> str:
    """The Snowball stem (core.text.stem), so 'tuples' meets 'tuple' and 'defined' meets 'define'; a hand-made
    suffix list cut 'tuples' to 'tupl' and left 'tuple' whole, so a section on tuples missed its definition."""
    return snowball_stem(term)


# Question words and particles: a passage answers "为何…" without ever saying "为何", so they must
# not count as terms the passage lacks (nor seed bigrams such as "何被").
_ZH_QUESTION_WORDS = re.compile(
    "为什么|为何|什么|怎么样|怎么|怎样|如何|哪一|哪些|哪个|哪位|哪里|哪儿|哪|多少|几|是否|是不是|吗|呢|谁|何时|何地|何|"
    "的|了|是|被|有|在|和|与|及|其|之|这|那|也|都|就|会|能|可以|主要|一个|一种")


def terms_of(text: str) -> list[str]:
    """Content terms, stemmed, a fiscal year also as its year; Chinese also as character bigrams (jieba may
    cut a phrase differently)."""
    out = with_fiscal_years([stem(t) for t in search_tokens(text) if not _ZH_QUESTION_WORDS.fullmatch(t)])
    for run in re.findall(f"{CJK_CHAR.pattern}+", _ZH_QUESTION_WORDS.sub(" ", text)):
        out += [run[i:i + 2] for i in range(len(run) - 1)]
    return out


_IDENTIFIER = re.compile(r"\b[A-Za-z]{7,}\b")      # long enough to be two words glued


def unit_terms(text: str) -> set[str]:
    """A passage's terms (terms_of), with the words its glued identifiers are made of ("LEFTPADDING" also counts as
    "left" and "padding"; core.text.compound_parts): a manual's names meet a learner's words."""
    terms = set(terms_of(text))
    for token in set(_IDENTIFIER.findall(text)):
        terms.update(stem(part) for part in compound_parts(token))
    return terms


def glued_terms(question: str) -> dict[str, tuple[str, str]]:
    """The question's glued words with their parts, stemmed ("truetype" -> ("true", "type")): a passage that writes
    them apart ("a true type font") holds them."""
    out = {}
    for token in set(_IDENTIFIER.findall(question)):
        parts = compound_parts(token, GLUED_WORD_MAX_ZIPF)
        if parts:
            out[stem(token.lower())] = (stem(parts[0]), stem(parts[1]))
    return out


def with_glued(terms: set[str], glued: dict[str, tuple[str, str]]) -> set[str]:
    return terms | {word for word, (a, b) in glued.items() if a in terms and b in terms} if glued else terms


def question_weights(question: str, document_frequency: dict[str, int], n_chunks: int) -> dict[str, float]:
    """IDF of the question's terms over the person's chunks (`document_frequency` is keyed by BM25
    token); a term in none of them weighs most. Chinese bigrams, which BM25 does not index, weigh
    as much as the median word."""
    n = max(n_chunks, 1)
    idf = lambda df: math.log(1 + (n + 1) / (df + 0.5))  # noqa: E731
    weights: dict[str, float] = {}
    for token in search_tokens(question):
        if _ZH_QUESTION_WORDS.fullmatch(token) or period_parts(token):
            continue     # a quarter written as one token ("Q22023") counts as its year and quarter (terms_of)
        key = stem(token)
        weights[key] = max(weights.get(key, 0.0), idf(document_frequency.get(token, 0)))
    words = sorted(weights.values())
    typical = words[len(words) // 2] if words else 1.0
    for term in terms_of(question):
        weights.setdefault(term, typical)
    return weights


# How much a question word that names the document ("Corning", "Think Python") counts: it says where to look,
# and every unit of that document is about it ("I have reviewed this Annual Report of Corning Incorporated").
DOCUMENT_NAME_WEIGHT = 0.3


def discount_document_names(weights: dict[str, float], hits: list[SearchHit]) -> dict[str, float]:
    """The question's weights with the words of its hits' file names and titles (not their years) cut."""
    return _discount(weights, {t for hit in hits for t in terms_of(f"{hit.doc_name} {hit.doc_title}")
                               if not t.isdigit()})


def discount_statement_names(weights: dict[str, float], question: str) -> dict[str, float]:
    """The question's weights with the words that name a financial statement ("on the income statement")
    cut like a document's name: they say where to look, and every row of that statement shares them."""
    return _discount(weights, {t for statement in STATEMENTS for m in statement.asked.finditer(question)
                               for t in terms_of(m.group())})


def _discount(weights: dict[str, float], naming: set[str]) -> dict[str, float]:
    return {t: w * DOCUMENT_NAME_WEIGHT if t in naming else w for t, w in weights.items()}


def coverage(question_terms: set[str], unit_terms: set[str], weights: dict[str, float]) -> float:
    total = sum(weights.get(t, 1.0) for t in question_terms)
    if not total:
        return 0.0
    return sum(weights.get(t, 1.0) for t in question_terms & unit_terms) / total


# -- question cues -----------------------------------------------------------------------------------

# "what is X", and what a thing does: "explain what upsd actually does", "what does the driver do", "X 是干嘛用的"
_ASKS_DEFINITION = re.compile(
    # after a polite opening ("can someone explain what a dummy index is", "pls define …")
    r"^\s*(?:(?:(?:can|could|would|will)\s+(?:you|someone|somebody|anyone|anybody)|pls|plz|please)\s+)?"
    r"(what\s+(is|are|does .+ mean)|define|explain what|meaning of)\b"
    # "what X (actually) does": X no pronoun, the clause ending there ("what example does the book use" asks no such)
    r"|\bwhat\s+(?:does\s+)?(?!(?:it|you|i|we|they|this|that|he|she|does|do)\b)[\w.\-]+(?:\s+\w+)?\s+"
    r"(?:actually\s+|really\s+)?(?:does|do)(?=\s*(?:[?？.!,;]|$|\b(?:with|for|in|when|exactly)\b))"
    r"|什么是|是什么|指什么|含义|定义|(?:什么|啥)意思|是干(?:嘛|什么|啥)的|干(?:嘛|什么|啥)用的|有什么用|有啥用|起什么作用",
    re.IGNORECASE)
_DEFINES = re.compile(r"\b(is|are) (a|an|the|one of|called|used|defined|responsible for)\b|\bmeans?\b(?!\s+of\b)|"
                      r"\brefers? to\b|"
                      r"\bis called\b|\bdefined as\b|\balso called\b|\b(?:also )?known as\b|"
                      r"是一种|是指|意味着|意思是|指的是|称为|定义为|负责|又称|也称|也叫", re.IGNORECASE)
# Forms that name what they define after them ("… is called a variable", "…的误差称为训练误差", "layout objects, also
# called graphical objects or grobs"); the others name it before ("A value is one of …")
_DEFINED_AFTER = re.compile(r"called|known as|称为|又称|也称|也叫", re.IGNORECASE)
# A Chinese form names the subject of its own clause, not of the sentence
_CLAUSE_BREAK = re.compile(r"[，,。；;：:]")
# "is used" right after a relative pronoun says what something else does, not what the sentence's subject is
_RELATIVE_BEFORE = re.compile(r"\b(?:which|that|who|whom|whose|where)\s*$", re.IGNORECASE)
# A Chinese definition names its subject first: "X是…", "X（…），中国足球运动员", "X，又称…". A 是 anywhere
# else ("在作客深圳队（实是在…）") defines nothing.
_ZH_DEFINES = re.compile(r"^[^，。；：]{0,6}?(是|为|（[^）]{0,40}）[，,]?|，(又称|又名|是|为))")


# A glossary line or a textbook's term in bold with its meaning after a colon: "查准率 P：被学习器预测为正例的
#样例中…", "variable: A name that refers to a value." (the term, at most a short symbol after it, the colon).
_GLOSSED = re.compile(r"^[^，。；：,.;:!?！？]{0,6}?[：:]\s*\S")
# A Chinese book's description list: the Latin term, then what it is ("TEXMFLOCAL 系统管理员用来安装供整个系统使用的
# 额外的或更新过的宏包、字体的目录。")
_DESCRIBED_ZH = re.compile(r"^\s+[\u4e00-\u9fff]")


def defines(unit_text: str, question_terms: set[str], listed: frozenset[str] = frozenset()) -> bool:
    """Whether the unit reads as a definition of something the question names: "A variable is a name that refers to
    a value" defines a variable, not a value (its "is a" comes after "variable", and "value" only after it).
    `listed`: terms written "term: …" on several lines (`glossed_often`), which are notes about them, not their
    definition."""
    head = unit_text[:200]
    for m in _DEFINES.finditer(head):
        if _RELATIVE_BEFORE.search(head, 0, m.start()):
            continue      # "… defined within them which is used to position them": a clause's, not a definition
        if _DEFINED_AFTER.search(m.group()):
            named = head[m.end():]
        else:
            named = head[:m.start()]
            if not m.group().isascii():      # "…最重要的事是，它仅仅是一种建议": that clause is about 它
                named = _CLAUSE_BREAK.split(named)[-1]
        if not question_terms or _names_any(named, question_terms):
            return True
    if any(t not in listed and _glossed(head, t) for t in question_terms):
        return True
    for term in question_terms:
        if len(term) >= 2 and CJK_CHAR.match(term) and head.startswith(term):
            return bool(_ZH_DEFINES.match(head[len(term):]))
        if term not in listed and len(term) >= 2 and head.casefold().startswith(term.casefold()) and \
                _DESCRIBED_ZH.match(head[len(term):]):
            return True
    return False


def _glossed(head: str, term: str) -> bool:
    return len(term) >= 2 and head.casefold().startswith(term.casefold()) and bool(_GLOSSED.match(head[len(term):]))


def glossed_often(texts: list[str], terms: set[str]) -> frozenset[str]:
    """The terms that several of these units write as "term: …". A glossary glosses a term once; release notes
    ("pdfTEX: 支持 JPEG Exif 和 JFIF；", "pdfTEX: 新的原语 \\expanded") list what changed in it, release after release,
    and "什么是 pdfTeX" was answered from them, not from "pdfTEX 在 ε-TEX 扩展的基础上构建…"."""
    return frozenset(t for t in terms if sum(_glossed(text[:200], t) for text in texts) >= 2)


def _names_any(text: str, terms: set[str]) -> bool:
    """Whether the text names one of the terms (an English one by its stem, a Chinese one by its characters)."""
    stems = {stem(t) for t in search_tokens(text)}
    return any((t in text) if CJK_CHAR.search(t) else (stem(t) in stems) for t in terms)


_ASKS_NUMBER = re.compile(r"\b(how (much|many|long|old|big|large|far)|what (was|is|were) the (total|amount|"
                          r"number|percentage|rate|value|cost|price|revenue)|what percentage|ratio|"
                          r"(by |on |until )?(what|which) (date|day|year|month))\b|多少|几|"
                          r"多长|多大|多高|哪一年|哪天|哪一天|何时|什么时候", re.IGNORECASE)
_NUMBER = re.compile(r"\d")
# A number that points somewhere is not a quantity: "(see Section 9.1 [Bash History Facilities], page 152)" answers
# no "how many" question, though it outranked "The text of the last $HISTSIZE commands (default 500) is saved."
_POINTER_NUMBER = re.compile(r"\b(?:sections?|chapters?|pages?|pp?\.|§|figures?|fig\.|tables?|equations?|eq\.|"
                             r"appendix|exercises?|listings?)\s*\(?\d+(?:\.\d+)*\)?|\[\d+\]|第\s*\d+(?:\.\d+)*\s*[章节页]|"
                             r"[图表式]\s*\d+(?:[.-]\d+)*", re.IGNORECASE)


def states_a_quantity(text: str) -> bool:
    """The text gives a number other than one that points to a section, page, figure or reference."""
    return bool(_NUMBER.search(_POINTER_NUMBER.sub(" ", text)))
# "多少公里", "几年", "how many years": the unit the number must come with
_ASKED_UNIT = re.compile(r"(?:多少|几)([\u4e00-\u9fff]{1,2})|\bhow many ([a-z]+)", re.IGNORECASE)


# "By what date must comments reach the FAA?" is answered by "… by September 21, 2020", not by "dated June 12":
# the date comes after the preposition the question asks with.
_ASKED_WHEN = re.compile(r"\b(by|before|until|after|since|from) (?:what|which) (?:date|day|month|year|time)\b",
                         re.IGNORECASE)


# A number the question quotes from the book ("书里那个 90% 和 95% 没看懂", "the curve with conductor 5077", "the 1/7
# example") is written in the passage asked about: a unit holding it counts for more. One digit alone is too common
# to say where ("step 2"), and a number that points somewhere ("chapter 10", "第 3 章") is the scope, not the passage.
_QUOTED_NUMBER = re.compile(r"(?<![A-Za-z0-9_.,/])(\d+(?:[.,/]\d+)*%?)(?![A-Za-z0-9_/])")   # beside Chinese too
QUOTED_NUMBER_BONUS = 0.08
# A year dates what is asked ("the revenue from bicycles in 2017"); every passage of that year writes it. Counted, it
# lifted a filing's unrelated revenue lines over the refusal threshold.
_YEAR = re.compile(r"(?:19|20)\d\d")
# A number inside a name ("the 737 MAX", "Flight 302", "Python 3") names the subject, not a passage: in the FAA's 737
# MAX notice it boosted every unit but the comment deadline's
_NAMED_NUMBER = re.compile(r"[A-Z][\w-]*\s+\d[\d.,/]*%?(?![\w/])|(?<![\w.,/])\d[\d.,/]*\s+[A-Z]")


def quoted_numbers(question: str) -> frozenset[str]:
    """The numbers a question quotes, as written ("90%", "5077", "1/7"): two characters or more, not pointers, years
    nor part of a name."""
    unnamed = _NAMED_NUMBER.sub(" ", _POINTER_NUMBER.sub(" ", question))
    return frozenset(m.group(1) for m in _QUOTED_NUMBER.finditer(unnamed)
                     if len(m.group(1)) >= 2 and not _YEAR.fullmatch(m.group(1)))


def holds_number(text: str, numbers: frozenset[str]) -> bool:
    """Whether the text writes one of the numbers as a number of its own ("90%" in "可用性为 90%。", not in "190%")."""
    return any(m.group(1) in numbers for m in _QUOTED_NUMBER.finditer(text))


# A question about a default ("how many commands does history remember by default", "画笔默认线宽是多少") is answered
# by the sentence that states it, as manuals write it: "(default 500)", "the default is A4", "defaults to", 默认为.
_ASKS_DEFAULT = re.compile(r"\bby default\b|\bdefault(?:s)?\b|默认|缺省", re.IGNORECASE)
_STATES_DEFAULT = re.compile(r"\(default[^)]{0,40}\)|\bthe default (?:value )?(?:is|was)\b|\bdefaults? (?:to|is)\b|"
                             r"\bby default\b|默认(?:值|设置)?(?:为|是)|缺省(?:值)?(?:为|是)", re.IGNORECASE)
STATES_DEFAULT_BONUS = 0.06
# "why would anyone use absolute note names", "what's the point of \fixed": the answer is what the thing is good for
# ("absolute mode is useful for music with large intervals")
_ASKS_ADVANTAGE = re.compile(
    # the scorer reads the question without its fillers ("why would use …": rag.focus drops "anyone")
    r"\bwhy (?:would|should|do|does|did|might) (?:(?:anyone|anybody|someone|somebody|people|one|i|you|we) )?"
    r"(?:ever )?(?:use|want|need|choose|prefer|pick)\b|\bwhy (?:use|bother|prefer|choose)\b|"
    r"\bwhat(?:'s|’s| is| are) the (?:point|advantages?|benefits?|use) of\b|"
    r"有什么好处|有啥好处|好处是什么|优点|有什么用|有啥用|为什么要用|为啥要用|何必", re.IGNORECASE)
_STATES_ADVANTAGE = re.compile(r"\b(?:useful|advantages?|benefits?|convenient|handy|helpful|preferable|"
                               r"makes? (?:it )?(?:easier|simpler|faster))\b|好处|优点|优势|方便|便于|有用", re.IGNORECASE)
STATES_ADVANTAGE_BONUS = 0.12
SYNTAX_BONUS = 0.12
# A unit naming the function a question calls ("outer()") as a plain word, in a section that never calls it, uses
# the word in another sense: R's "outer margins" of a plot for "any example where outer() is actually useful?"
CALLED_ELSEWHERE_PENALTY = 0.15
# A footnote (rag.footnotes) is an aside to the text it annotates, seldom what a question asks
FOOTNOTE_PENALTY = 0.3
# A book shows a listing, then explains it: "%:\n dh $@" and, a few lines on, "第 16 和 17 行使用了 pattern rule … 其中的
# 百分号意味着“任何 targets” … dh 命令是一个包装脚本". The prose after a short line writing all the syntax a question
# quotes explains that syntax without writing it, while a line writing part of it ("使用 dh $@ --with quilt") is about
# something else; the explanation counts as holding the syntax. A listing is short and does not end as a sentence
# does; the prose is this close after it.
LISTING_MAX_CHARS = 120
_PROSE_ENDINGS = (".", "。", "!", "！", "?", "？", ":", "：")
EXPLAINED_WITHIN_CHARS = 600
# A paragraph that opens with a term ("* ($*) Expands to …", "tuple: an immutable …") is that term's entry: the
# entry's later sentences speak of it without naming it ("When the expansion occurs within double quotes, it expands
# to a single word"). Its head is this many characters.
ENTRY_HEAD_CHARS = 24


def asked_unit(question: str) -> re.Pattern | None:
    """A pattern for "a number with the unit the question asks for" ("548公里" for "全长多少公里"), or for a date
    after the preposition a "by what date" question asks with."""
    when = _ASKED_WHEN.search(question)
    if when:
        return re.compile(rf"\b{when.group(1)}\s+(?:the\s+)?(?:[A-Za-z]+\.?\s+\d{{1,2}}\b|\d)", re.IGNORECASE)
    m = _ASKED_UNIT.search(question)
    if not m:
        return None
    if m.group(1):
        return re.compile(rf"\d\s*(?:{re.escape(m.group(1))}|{re.escape(m.group(1)[0])})")
    word = stem(m.group(2).lower())
    return re.compile(rf"\d[\d,.]*\s+{re.escape(word)}", re.IGNORECASE)


# -- scoring -----------------------------------------------------------------------------------------

@dataclass
class Evidence:
    n: int              # 1-based position of the hit the unit comes from
    hit: SearchHit
    unit: Unit
    score: float        # 0..1, how well the unit answers the question
    lexical: float
    semantic: float | None


def embedder_for(embedders, *texts: str):
    """The embedder that judges meaning across these texts' languages: `embedders` is one Embedder or
    rag.dense.DenseSpaces (the default embedder, else the multilingual one); None when none knows them."""
    if embedders is None:
        return None
    return embedders.for_languages({detect_language(t) for t in texts if t})


# A unit under a heading of the statement the question names (rag.statements). FinanceBench, no LLM:
# cited_gold 0.24 -> 0.28, refused_answerable 8 -> 7 of 58; near_miss_en (its first 20) unchanged at 0.75.
STATEMENT_BONUS = 0.06
# "What example does the book use to explain tuple assignment?": the section "12.2 Tuple assignment" holds the
# book's own example (a, b = b, a), while other sections' sentences say "For example" and "tuple" more often. A
# unit under the section whose title the question says, word for word, is what the reader points at.
NAMED_SECTION_BONUS = 0.1
NAMED_SECTION_MIN_WORDS = 2     # a one-word title ("Lists") names a whole topic, not the place asked about


def unit_heading_paths(candidates) -> dict[tuple[int, int], list[str]]:
    """{(id(hit), unit start): the heading path the unit stands under}. A chunk may hold several short sections (its
    path is the first one's), so each unit is placed under the heading above it."""
    out, pieces = {}, {}
    for _, hit, unit in candidates:
        if id(hit) not in pieces:
            pieces[id(hit)] = [(p.char_start - hit.chunk.char_start, p.heading_path)
                               for p in split_at_headings(hit.chunk)]
        above = [path for start, path in pieces[id(hit)] if start <= unit.start]
        out[(id(hit), unit.start)] = above[-1] if above else hit.chunk.heading_path
    return out


def _units_under_named_sections(question_tokens: list[str], candidates,
                                paths: dict[tuple[int, int], list[str]]) -> set[tuple[int, int]]:
    """(id(hit), unit start) of the candidate units whose own section the question names (`paths`:
    unit_heading_paths)."""
    return {key for key, path in paths.items() if names_section(question_tokens, path)}


def names_section(question_tokens: list[str], heading_path: list[str]) -> bool:
    """Whether the question says the chunk's own section title (its number left out), its words adjacent and in
    order, stemmed as BM25 stems them: "tuple assignment" names "12.2. Tuple assignment"."""
    if not heading_path:
        return False
    title = [t for t in bm25_tokens(heading_text(heading_path[-1])) if t not in STOPWORDS]
    n = len(title)
    return n >= NAMED_SECTION_MIN_WORDS and any(question_tokens[i:i + n] == title
                                                for i in range(len(question_tokens) - n + 1))


# What each kind of question (rag.kinds) looks for in a unit, beside its words: a why-question a reason, a how-to
# question steps or code, an example question an example. (unit kinds, pattern or None for any, bonus)
# "reason" itself: "for the same reason that 1/7 gave you 1/7: … PARI doesn't see any reason to make it inexact";
# a purpose: "was intended to reduce the load", "created separately so those people don't have to spend CPU time"
_REASON = re.compile(r"\b(because|since|so that|in order to|reasons?|this is why|that is why|that's why|therefore|"
                     r"thus|hence|which means|due to|caused by|as a result|to avoid|to make sure|so you can|"
                     r"otherwise|(?:is|are|was|were) (?:intended|meant|designed) to|purpose|the point (?:is|was)|"
                     r"so (?:that )?(?:you|they|those|people|users|we|it|the)\b)\b|因为|由于|所以|因此|为了|从而|使得|以便|原因|目的是|否则|这样|之所以|导致|造成",
                     re.IGNORECASE)
_STEP = re.compile(r"^\s*(\d+[.)]\s|step\b|first\b|then\b|next\b|finally\b)|\b(you can|to do this|use the)\b|"
                   r"首先|然后|接着|最后|步骤|第[一二三四五六七八九十]步|可以通过|可以用|只需", re.IGNORECASE)
_EXAMPLE = re.compile(r"\b(for example|for instance|e\.g\.|such as|here is|here's|like this|as an example|consider|"
                      r"following|suppose|imagine)\b|例如|比如|举例|如下|示例|例子|下面是|以下是|假设|假如|设想", re.IGNORECASE)
# A sentence that only says what follows ("pdfLATEX 用法如下。", "Its syntax is as follows:"): the usage after it does
# not say what the thing is. It ends with one of these words, or with a colon. Data, tested in test_kind_cues.
ANNOUNCING_ENDS = ("如下", "以下", "下面", "as follows", "the following", "like this")
_ANNOUNCES = re.compile("(?:" + "|".join(map(re.escape, ANNOUNCING_ENDS)) + r")\s*[。.:：]?\s*$|[:：]\s*$",
                        re.IGNORECASE)
# A glossary defines terms one line each; it shows no example and gives no steps. An example or how-to question
# prefers the chapter's own text (a glossary line shares the question's words and was picked over the example).
_GLOSSARY = re.compile(r"^\s*(?:\d+(?:\.\d+)*\.?\s*)?(?:glossary|key terms|vocabulary|术语表?|词汇表|名词解释)\s*$",
                       re.IGNORECASE)
SECTION_PENALTIES: dict[str, list[tuple[re.Pattern, float]]] = {
    "example": [(_GLOSSARY, 0.1)],
    "howto": [(_GLOSSARY, 0.1)],
}


# A manual's history of itself — release notes, the changes from one version to the next, the project's story —
# names every part of the program ("upsmon picked up the concepts of … primary and secondary") and explains none
# of them as they are now: "what does upsd actually do" was answered from the 2.0.0 release story. Anywhere in the
# heading path (the history's dated subsections sit under it). A question about versions or history is exempt.
_HISTORY = re.compile(r"^\s*(?:appendix\s+|附录\s*)?(?:[A-Z]|\d+)?(?:\.\d+)*\.?\s*"
                      r"(?:project history|release (?:notes|history)|revision history|version history|"
                      r"changes (?:from|since|in) (?:version )?v?\d|what['’]?s new in|"
                      r"发行历史|版本历史|发布历史|历史版本|版本更新记录)", re.IGNORECASE)
_ASKS_HISTORY = re.compile(r"\b(?:history|histories|version|versions|release[sd]?|changed?|changes|new in|used to|"
                           r"originally|renamed|when (?:was|were|did)|\d{4})\b|历史|版本|发布|发行|改名|以前|早期|哪一年",
                           re.IGNORECASE)
HISTORY_PENALTY = 0.1
HISTORY_KINDS = frozenset({"explain", "compare", "why", "howto", "example"})


def section_penalty(kind: str | None, heading_path: list[str], question: str = "") -> float:
    """What the section a unit stands in costs it for this kind of question (SECTION_PENALTIES; a manual's history
    of itself for a question not about it)."""
    penalty = sum(penalty for pattern, penalty in SECTION_PENALTIES.get(kind or "", [])
                  if any(pattern.match(h) for h in heading_path[-1:]))
    if kind in HISTORY_KINDS and off_in_history(heading_path, question):
        penalty += HISTORY_PENALTY
    return penalty


def off_in_history(heading_path: list[str], question: str) -> bool:
    """Whether a unit under this heading path stands in the manual's history of itself (`_HISTORY`) and the
    question does not ask about versions or history."""
    return any(_HISTORY.match(h) for h in heading_path) and not _ASKS_HISTORY.search(question)


KIND_CUES: dict[str, list[tuple[tuple[str, ...], re.Pattern | None, float]]] = {
    "why": [(("sentence",), _REASON, 0.08)],
    "howto": [(("code",), None, 0.08), (("sentence",), _STEP, 0.05)],
    "example": [(("code",), None, 0.10), (("sentence",), _EXAMPLE, 0.06)],
    "explain": [(("sentence",), _DEFINES, 0.06), (("code",), None, -0.06), (("sentence",), _ANNOUNCES, -0.06)],
}


def kind_bonus(kind: str | None, unit: Unit) -> float:
    return sum(bonus for kinds, pattern, bonus in KIND_CUES.get(kind or "", [])
               if unit.kind in kinds and (pattern is None or pattern.search(unit.text[:300])))


# A unit in the question's own language that shares not one of its terms (a word, or in Chinese a character
# pair) is judged by meaning alone, and the embedder finds much same-language text close: "应当注意这里是正比于
# 而不是等于，因为涉及到概率的规范化" scored 0.84 for a question about the FAA notice's readiness flight and
# led the answer. Across languages sharing nothing is normal and the meaning keeps its whole weight.
SHARED_NOTHING_SEMANTIC_SHARE = 0.5
# A figure's or table's caption alone is a title: close in meaning to a question about its subject, it answers
# nothing unless the question asks about the figure or table itself
CAPTION_PENALTY = 0.3
CAPTION_MAX_CHARS = 120
_ASKS_CAPTION = re.compile(r"\b(?:figure|fig\.|table|listing|diagram|plot|chart)\s*\d|图\s*\d|表\s*\d", re.IGNORECASE)


def explains_listing(units: list[Unit], text: str, syntax: tuple) -> set[int]:
    """The starts of the prose units that follow, within EXPLAINED_WITHIN_CHARS and under the same heading, a
    short unit writing every pattern of `syntax` (the listing the question quotes)."""
    if not syntax:
        return set()
    listings = [u for u in units if len(u.text) <= LISTING_MAX_CHARS and not u.text.rstrip().endswith(_PROSE_ENDINGS)
                and all(s.pattern.search(u.text) for s in syntax)]
    return {u.start for u in units for listing in listings
            if u.kind == "sentence" and listing.end <= u.start <= listing.end + EXPLAINED_WITHIN_CHARS
            and not holds_syntax(u.text, syntax) and not _heading_between(text, listing.end, u.start)}


def score_evidence(question: str, hits: list[SearchHit], embedder, weights: dict[str, float], *,
                   max_hits: int = 8, max_embedded: int = 32, kind: str | None = None) -> list[Evidence]:
    """Every unit of the best non-front-matter hits, scored, best first. `kind` is the question's kind
    (rag.kinds): a why-question prefers a reason, an example question code, and so on (KIND_CUES)."""
    q_terms = set(terms_of(question))
    syntax = syntax_patterns(question)
    explaining: set[tuple[int, int]] = set()       # (hit, unit start) of prose explaining the quoted listing
    candidates: list[tuple[int, SearchHit, Unit]] = []
    for n, hit in enumerate(hits, start=1):
        if len({c[0] for c in candidates}) >= max_hits:
            break
        if is_front_matter(hit):
            continue
        name_letters = re.sub(r"[^a-z]", "", f"{hit.doc_name} {hit.doc_title}".lower())
        # a heading left in the text as a line of its own ("Coordinate System") names a topic and says nothing
        headings = {_folded_heading(h) for h in hit.chunk.heading_path}
        units = split_units(hit.chunk.text, hit.chunk.context_prefix)
        explaining |= {(id(hit), start) for start in explains_listing(units, hit.chunk.text, syntax)}
        for unit in units:
            toc_entry = unit.kind == "sentence" and (len(unit.text) < 80 and _TOC_LINE.search(unit.text) or
                                                     _DOT_LEADER.search(unit.text))
            if unit.kind == "sentence" and len(unit.text) < 80 and \
                    (_folded_heading(unit.text) in headings or _TITLE_LINE.fullmatch(unit.text.strip())):
                continue
            if len(unit.text) >= 12 and not toc_entry and not names_only_its_document(unit.text, name_letters) \
                    and not is_markup(unit.text) and not is_instruction(unit.text) and not is_wordless(unit):
                candidates.append((n, hit, unit))
    if not candidates:
        return []
    glued = glued_terms(question)
    lexical_scores = [coverage(q_terms, with_glued(unit_terms(u.text), glued), weights) for _, _, u in candidates]
    # Embedding every unit would cost seconds on a small CPU; the lexically best ones (and each hit's
    # first units, where paraphrases hide) are embedded, the rest keep their lexical score alone.
    semantic_scores: dict[int, float] = {}
    order = sorted(range(len(candidates)), key=lambda i: (-lexical_scores[i], candidates[i][0]))
    picked = sorted(set(order[:max_embedded]))
    embedder = embedder_for(embedder, question, " ".join(candidates[i][2].text for i in picked[:8]))
    if embedder is not None:
        # A unit in another language shares no word with the question and is judged by meaning alone, on the
        # same-language scale: the cross-language one barely tells an answer from an unrelated passage (English
        # questions over the pumpkin book: answerable ones' best units 0.55-0.91 on it, unrelated ones' 0.39-0.76).
        # With a model, the question is also asked in the passage's language (RAGTool._translation).
        units = embedder.embed([candidates[i][2].text[:1000] for i in picked], kind="document")
        cosines = units @ embedder.embed_query(question)
        semantic_scores = {i: embedder.relatedness(float(c)) for i, c in zip(picked, cosines)}
    # Without the embedder's view, a unit is also judged by its passage: the answer sentence often leaves
    # out the subject the passage named before it ("于乐 … 中国足球运动员").
    passage_scores = {id(hit): coverage(q_terms, set(terms_of(" ".join([hit.doc_title, *hit.chunk.heading_path,
                                                                          hit.chunk.text]))), weights)
                      for _, hit, _ in candidates}
    asks_definition = bool(_ASKS_DEFINITION.search(question))
    # what the question is about, not how it asks ("someone", "explain": "… is best explained by some examples")
    subject_terms = {t for t in search_tokens(question) if not _ZH_QUESTION_WORDS.fullmatch(t)
                     and t not in QUESTION_PHRASING}
    listed = glossed_often([unit.text for _, _, unit in candidates], subject_terms) if asks_definition else frozenset()
    question_tokens = [t for t in bm25_tokens(question) if t not in STOPWORDS]
    paths = unit_heading_paths(candidates)
    named_section = _units_under_named_sections(question_tokens, candidates, paths)
    asks_number = bool(_ASKS_NUMBER.search(question))
    asks_default = bool(_ASKS_DEFAULT.search(question))
    asks_advantage = bool(_ASKS_ADVANTAGE.search(question))
    numbers = quoted_numbers(question)
    unit_pattern = asked_unit(question)
    statements = named_statements(question)
    in_statement = {id(hit): under_statement(hit.chunk.heading_path, statements)
                    for _, hit, _ in candidates} if statements else {}
    asks_about_captions = bool(_ASKS_CAPTION.search(question))
    question_in_chinese = detect_language(question) == "zh"
    scored_hits = {id(hit): hit for _, hit, _ in candidates}.values()
    footnotes = {id(hit): footnote_spans(hit.chunk.text, hit.chunk.page_breaks) for hit in scored_hits}
    calls = any(s.call for s in syntax)
    out = []
    for i, (n, hit, unit) in enumerate(candidates):
        lexical = lexical_scores[i]
        semantic = semantic_scores.get(i)
        if semantic is None:
            score = 0.6 * lexical + 0.4 * passage_scores[id(hit)]
        else:
            if lexical == 0 and bool(CJK_CHAR.search(unit.text)) == question_in_chinese:
                semantic *= SHARED_NOTHING_SEMANTIC_SHARE
            score = 0.55 * lexical + 0.45 * semantic
        score += kind_bonus(kind, unit) - section_penalty(kind, paths[(id(hit), unit.start)], question)
        if asks_definition and defines(unit.text, subject_terms, listed):
            score += DEFINITION_BONUS
        # it writes the syntax the question quotes ("{x..y}" for "{1..$n}"), or the entry it stands in does
        if syntax and (holds_syntax(unit.text, syntax) or holds_syntax(entry_head(hit.chunk.text, unit.start), syntax)
                       or (id(hit), unit.start) in explaining):
            score += SYNTAX_BONUS
        elif calls and names_but_never_calls(unit.text, section_around(hit.chunk.text, unit.start, unit.end), syntax):
            score -= CALLED_ELSEWHERE_PENALTY
        if asks_default and _STATES_DEFAULT.search(unit.text):
            score += STATES_DEFAULT_BONUS
        if asks_advantage and _STATES_ADVANTAGE.search(unit.text):
            score += STATES_ADVANTAGE_BONUS
        if numbers and holds_number(unit.text, numbers):
            score += QUOTED_NUMBER_BONUS
        if asks_number:
            score += 0.06 if states_a_quantity(unit.text) else -0.06
            if unit_pattern is not None and unit_pattern.search(unit.text):
                score += 0.06
        if in_statement.get(id(hit)):
            score += STATEMENT_BONUS   # "from the balance sheet": the question says where its answer is
        if (id(hit), unit.start) in named_section:
            score += NAMED_SECTION_BONUS
        if unit.kind == "sentence" and not asks_about_captions and text_rows.is_caption(unit.text) and \
                len(unit.text) <= CAPTION_MAX_CHARS:
            score -= CAPTION_PENALTY    # "Figure 3-7: Using TTF fonts in paragraphs" names what the text around it says
        if is_exercise(unit.text) or unit.text.rstrip().endswith(("?", "？")) or \
                any(is_exercise(h) for h in hit.chunk.heading_path[-1:]):
            score -= 0.3          # an exercise or a question in the text asks; it does not answer
        if quotes_whole(question, unit.text):
            score -= QUOTED_BY_QUESTION_PENALTY
        if in_footnote(unit.start, footnotes[id(hit)]):
            score -= FOOTNOTE_PENALTY
        score += 0.03 / n     # the retriever's order breaks near-ties
        out.append((score, Evidence(n, hit, unit, max(0.0, min(1.0, score)), lexical, semantic)))
    out.sort(key=lambda pair: -pair[0])     # by the unclipped score: two units at 1.0 are not equal
    return [ev for _, ev in out]


# "what is a grob?": the sentence that says what it is ("… are called ‘Layout objects’, often known as ‘Graphical
# Objects’, or ‘Grobs’ for short.") before one that says something of it ("All grobs have a reference point …")
DEFINITION_BONUS = 0.08      # 0.15 tried: 16 sets without a model 1,177 -> 1,176


# "书里写 TEXINPUTS=.:/my/macro/dir: 末尾还多一个冒号，这个冒号到底啥意思？": the book's line the question quotes holds
# every symbol it asks about, and scored best — but the learner has it already; what answers is the book's
# sentence about it.
QUOTED_BY_QUESTION_PENALTY = 0.3
QUOTED_MIN_CHARS = 8        # "dh $@" alone may be what a lookup asks to find


def quotes_whole(question: str, unit_text: str) -> bool:
    """Whether the question quotes the unit whole (white space aside): a line of the book it asks about."""
    unit = "".join(unit_text.split())
    return len(unit) >= QUOTED_MIN_CHARS and unit in "".join(question.split())


def evidence_strength(evidence: list[Evidence], unknown: list[str] | None = None, *,
                      looked_up_across: bool = False) -> float:
    """How well the documents answer the question: the best unit's score (0 when there is none), less
    UNKNOWN_WORD_PENALTY when the question hinges on words the documents never use (`unknown_words`).
    `looked_up_across`: an unknown word was translated and the other language's books do not hold it either."""
    if not evidence:
        return 0.0
    best = evidence[0]
    # Unknown words are English; an English question over a Chinese book shares no words with it by nature,
    # unless the word's translation was looked for there too.
    if unknown and (looked_up_across or detect_language(best.unit.text) == "en"):
        return max(0.0, best.score - UNKNOWN_WORD_PENALTY)
    return best.score


# "What was Boeing's revenue from selling bicycles?" with Boeing's 10-K loaded: the filing's revenue table
# matches every other word, and the embedder finds it close. A word no chunk of the library contains says
# the asked thing is not there; it does not prove it (a reader's paraphrase uses words a book may not), so
# it lowers the strength rather than refusing outright.
UNKNOWN_WORD_PENALTY = 0.15   # near-miss set 5 -> 15 of 20 refused; FinanceBench answerable 7 -> 8 of 58 ("capex")
UNKNOWN_WORDS_MIN_CHUNKS = 100   # a word missing from a short note says little; from a 30-page filing, more
_WORD = re.compile(r"[A-Za-z]+")
_COMPOUND_FIRST = re.compile(r"\b([A-Za-z]+)-(?=[A-Za-z])")
# Words that shape an English question rather than name what it asks about, and a reader's fillers
# ("can someone explain the … thing?", "what does this stuff actually do").
QUESTION_PHRASING = frozenset("many much kind kinds type types explain describe tell please mean means "
                               "happen happens difference someone somebody anyone anybody something thing things "
                               "stuff actually really basically literally confused understand anyway thanks "
                               "guys okay "
                               # a reader's hedge: "all those e.disc style things", "C-style loops"
                               "style "
                               # contractions typed without the apostrophe ("\\addlyrics doesnt seem to be enough")
                               "doesnt dont didnt isnt arent wasnt werent cant couldnt shouldnt wouldnt wont havent "
                               "hasnt hadnt aint thats whats theres "
                               # what a learner wants done ("I want to read my distances from a csv file")
                               "wanna gonna trying instead".split())
# English's most common words ("want", "need", "really", "know": zipf 5.8 and over) name no topic a library lacks
PHRASING_MIN_ZIPF = 5.8


class QuestionTerms(NamedTuple):
    focus: str                        # the question without answer-format instructions (rag.focus)
    document_frequency: dict[str, int]  # chunks holding each looked-up search token; 0 = none
    n_chunks: int


# a word this common names no particular topic: "give" (5.7), "wrong" (5.4), "时候" (5.9); "results" (5.2), "成本" (4.9) may
TOPIC_MAX_ZIPF_EN = 5.3
TOPIC_MAX_ZIPF_ZH = 5.5


def names_a_topic(token: str) -> bool:
    """Whether a token of a question (core.text.search_tokens) names what it is about rather than shaping the
    question or the learner's situation: "param", "dimension", "成本" do; "look", "give", "多少", "晕" do not."""
    from wordfreq import zipf_frequency
    if CJK_CHAR.match(token):
        return len(token) >= 2 and not _ZH_QUESTION_WORDS.fullmatch(token) and \
            zipf_frequency(token, "zh") < TOPIC_MAX_ZIPF_ZH
    return not _shapes_the_question(token, TOPIC_MAX_ZIPF_EN)


def _shapes_the_question(token: str, max_zipf: float) -> bool:
    """Whether an English word (lower case) is the question's phrasing or too common to name a topic."""
    from wordfreq import zipf_frequency
    return len(token) < 4 or token in QUESTION_PHRASING or token in STOPWORDS or \
        zipf_frequency(token, "en") >= max_zipf


def unknown_words(question: str, document_frequency: dict[str, int], n_chunks: int) -> list[str]:
    """English words of the question (4+ letters) that `document_frequency` counts in none of the person's
    `n_chunks` chunks (a word it did not look up is not judged); none while the library is smaller than
    UNKNOWN_WORDS_MIN_CHUNKS. Abbreviations written with capitals inside ("PPNE", "JnJ") are left out:
    documents spell them out."""
    if n_chunks < UNKNOWN_WORDS_MIN_CHUNKS:
        return []
    out = []
    words = _WORD.findall(question)
    # the document's forms searched beside a reader's word ("folder (directory)") are ours, not the reader's
    added = {other for word in words for other in other_forms(word)}
    # not a word of its own: the first part of a hyphenated compound ("multi" of "multi-line stuff": the compound
    # is judged by its last part)
    first_parts = {m.group(1).lower() for m in _COMPOUND_FIRST.finditer(question)}
    for word in words:
        token = word.lower()
        if token in added or token in first_parts:
            continue
        if any(c.isupper() for c in word[1:]) or _shapes_the_question(token, PHRASING_MIN_ZIPF):
            continue
        if document_frequency.get(token) == 0 and token not in out and \
                not any(document_frequency.get(other) for other in other_forms(token)) and \
                not any(document_frequency.get(other.lower()) and _siblings(token, other.lower()) for other in words):
            out.append(token)
    return out


SIBLING_STEM_MIN = 4      # letters two names of one family share: "norm" of dnorm / pnorm
SIBLING_AFFIX_MAX = 2     # letters in which they differ, at one end: the family's prefix or suffix


def _siblings(word: str, other: str) -> bool:
    """Whether two words are one family's members, differing only in a short prefix or suffix ("dnorm" and
    "pnorm", "lapply" and "sapply"): a reader listing "dnorm, pnorm, qnorm, rnorm" names what the book explains
    once for the family, and it writes only some of them."""
    if word == other:
        return False
    for a, b in ((word, other), (word[::-1], other[::-1])):     # the same beginning, or the same ending
        common = len(os.path.commonprefix([a, b]))
        if common >= SIBLING_STEM_MIN and max(len(a), len(b)) - common <= SIBLING_AFFIX_MAX:
            return True
    return False


# -- checking a composed answer -------------------------------------------------------------------------

@dataclass
class SentenceCheck:
    sentence: str
    cited: list[int]         # the [n] it cites
    supported: bool
    score: float             # best support over its cited passages, 0..1


def sentence_support(sentence: str, passage: str, embedder, *, passage_units: list[str] | None = None) -> float:
    """How much of the sentence the passage backs, 0..1: mostly the share of its content terms found in
    the passage, helped by its best cosine with one of the passage's units (when the embedder knows the
    language). A topic alone is not support: a number the passage does not contain sinks the score."""
    s_terms = set(terms_of(sentence))
    if not s_terms:
        return 1.0
    p_terms = set(terms_of(passage))
    lexical = len(s_terms & p_terms) / len(s_terms)
    score = lexical
    embedder = embedder_for(embedder, sentence, passage[:400])
    if embedder is not None:
        units = passage_units or [u.text for u in split_units(passage)] or [passage]
        vectors = embedder.embed([sentence] + [u[:1000] for u in units], kind="document")
        best = float(np.max(vectors[1:] @ vectors[0])) if len(units) else 0.0
        unrelated, close = embedder.calibration   # sentence vs passage: a little more lenient than a question
        score = 0.6 * lexical + 0.4 * embedder.relatedness(best + 0.1 * (close - unrelated))
    numbers = set(_NUMBERS.findall(sentence))
    if numbers - set(_NUMBERS.findall(passage)):
        score = min(score, 0.3)
    return score


_NUMBERS = re.compile(r"\d+(?:[.,]\d+)*")
SUPPORTED = 0.5


_SENTENCE = re.compile(r".+?(?:(?<!\bpp)(?<!\bp)(?<!\be\.g)(?<!\bi\.e)(?<!\bvs)(?<!\bFig)(?<!\bNo)(?<!\bch)"
                       r"[.!?。！？](?:\s*(?:\[\d{1,6}\]|⚠))*(?=\s|$)|(?<=[。！？])|$)", re.DOTALL)


def answer_sentences(text: str) -> list[str]:
    """Sentences of a composed answer, each keeping the citations — and a ⚠ (rag.answer.attribute_uncited) —
    that follow its full stop. A paragraph ends a sentence: a small model's line without a full stop ("Type
    zet(s) = …") ran into the next paragraph's first sentence, which then escaped the check for repeats."""
    return [p.group().strip() for paragraph in re.split(r"\n\s*\n", text)
            for p in _SENTENCE.finditer(paragraph) if p.group().strip()]
