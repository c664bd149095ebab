"""A worked example kept whole: what an example or how-to question is answered with.

A book's example runs past the sentence that best matches the question: "Suppose you want to count how many
times each letter appears" is followed by the code, the call on 'brontosaurus' and what it prints; "The first
step is to consider what a distance function should look like" by four versions of the function. Chunks are
about 200 tokens, so the example usually goes on in the next chunk of the same section. Here a chunk is
continued with the text that follows it in its section (`continued`), and the answer shows the matched unit
with what follows it — sentences and code blocks whole — up to a length (`worked_example`).
"""
from __future__ import annotations

import dataclasses
import re

from core.text import token_spans
from rag.chunk import HEADING_LINE
from rag.compare import states_the_difference
from rag.evidence import (Evidence, Unit, in_entry_of, is_exercise, is_markup, is_wordless, split_units, units_after,
                          units_before)
from rag.injection import is_instruction
from rag.rows import as_markdown as rows_as_markdown
from rag.types import Chunk, SearchHit

# How much text after a chunk's end is read to finish an example: a page of a textbook.
CONTINUED_CHARS = 2400
# An overlap is found by the next chunk's first characters inside the previous chunk's tail.
_PROBE_CHARS = 48


def continued(chunk: Chunk, chunks: list[Chunk], more_chars: int = CONTINUED_CHARS) -> Chunk:
    """`chunk` with the text of the chunks after it in the same section appended (their overlap once), until
    `more_chars` were added or the section ends. The chunk keeps its id and its text's offsets, so units and
    citations found in the short chunk stay where they were; its page map and last page grow with it."""
    at = next((i for i, c in enumerate(chunks) if c.chunk_id == chunk.chunk_id), None)
    if at is None:
        return chunk
    text, breaks, page_end, char_end = chunk.text, list(chunk.page_breaks), chunk.page_end, chunk.char_end
    for nxt in chunks[at + 1:]:
        if len(text) - len(chunk.text) >= more_chars or nxt.heading_path != chunk.heading_path:
            break
        skip = _overlap(text, nxt, char_end)
        if skip is None:
            break                      # a gap or text that does not line up: stop rather than guess
        added = nxt.text[skip:]
        heading = HEADING_LINE.search(added)       # a small next section merged into this chunk ends it here
        if heading:
            added = added[:heading.start()].rstrip()
        base = len(text) + (0 if skip else 2) - skip
        if not skip:
            text += "\n\n"             # chunks without overlap were cut at a paragraph's end
        page_at_join = nxt.pages_of_span(skip, skip + 1)[0]
        if page_at_join is not None and (not breaks or breaks[-1][1] != page_at_join):
            breaks.append((len(text), page_at_join))
        breaks += [(base + offset, page) for offset, page in nxt.page_breaks if offset > skip]
        text += added
        char_end = nxt.char_end
        page_end = nxt.page_end if nxt.page_end is not None else page_end
        if heading:
            page_end = nxt.pages_of_span(skip, skip + max(1, len(added)))[1]
            break
    if text == chunk.text:
        return chunk
    return dataclasses.replace(chunk, text=text, page_end=page_end, char_end=char_end, page_breaks=breaks,
                               token_count=len(token_spans(text)))


def _overlap(text: str, nxt: Chunk, char_end: int) -> int | None:
    """How many of `nxt`'s first characters `text` already ends with: 0 when the chunks do not overlap, None
    when they should and the text does not show where (the overlap is found by the next chunk's first
    characters in the tail, and checked: the whole tail from there must begin the next chunk)."""
    shared = char_end - nxt.char_start
    if shared <= 0:
        return 0
    for size in (_PROBE_CHARS, 24, 12, 6):
        if size > shared:
            continue
        found = text.find(nxt.text[:size], max(0, len(text) - shared - size))
        while found >= 0:
            if nxt.text.startswith(text[found:]):
                return len(text) - found
            found = text.find(nxt.text[:size], found + 1)
    return None


# A sentence that begins by pointing back at what the book just showed: "This program demonstrates a pattern
# called a guardian", "This operation is called a type-based dispatch", "这段代码…". What it names is the code
# above it, often in the chunk before (tests/test_worked.py).
BACK_REFERENCES = (
    "this program", "this function", "this code", "this example", "this operation", "this method", "this version",
    "this pattern", "this loop", "this class", "this definition", "this implementation", "these functions",
    "these methods", "these examples", "the code above", "the program above", "the function above",
    "the example above", "in this example", "in this version",
    "这段代码", "这个程序", "这个函数", "这个例子", "这个方法", "这种写法", "上面的代码", "上面的例子", "上述代码", "以上代码",
)
BACK_REFERENCE_REACH = 3     # sentences that may stand between the code and the sentence pointing back at it


def refers_back(sentence: str) -> bool:
    """Whether the sentence begins by pointing back at what came before it ("This program …")."""
    return sentence.lstrip().lower().startswith(BACK_REFERENCES)


def preceded(chunk: Chunk, chunks: list[Chunk], back: int = 1) -> tuple[Chunk, int]:
    """`chunk` with the `back` chunks before it in the same section joined in front (their overlaps once), and how
    far the chunk's own text moved (its units' offsets grow by that). The chunk keeps its id; its first page and
    page map grow backwards. Joining stops at the section's start or where two chunks do not line up; (chunk, 0)
    when nothing was joined."""
    at = next((i for i, c in enumerate(chunks) if c.chunk_id == chunk.chunk_id), None)
    joined, moved = chunk, 0
    for prev in reversed(chunks[max(0, at - back):at] if at else []):
        if prev.heading_path != chunk.heading_path:
            break
        step = _joined_after(prev, joined)
        if step is None:
            break
        joined, shift = step
        moved += shift
    return joined, moved


def _joined_after(prev: Chunk, chunk: Chunk) -> tuple[Chunk, int] | None:
    """`prev` and `chunk` as one chunk with `chunk`'s id, and how far `chunk`'s text moved; None when they do not
    line up."""
    skip = _overlap(prev.text, chunk, prev.char_end)
    if skip is None:
        return None
    sep = "" if skip else "\n\n"
    shift = len(prev.text) + len(sep) - skip
    breaks = list(prev.page_breaks) or ([(0, prev.page_start)] if prev.page_start is not None else [])
    page_at_join = chunk.pages_of_span(skip, skip + 1)[0]
    if breaks and page_at_join is not None and breaks[-1][1] != page_at_join:
        breaks.append((len(prev.text) + len(sep), page_at_join))
    if breaks:
        breaks += [(shift + offset, page) for offset, page in chunk.page_breaks if offset > skip]
    text = prev.text + sep + chunk.text[skip:]
    first_page = prev.page_start if prev.page_start is not None else chunk.page_start
    return dataclasses.replace(chunk, text=text, page_start=first_page, char_start=prev.char_start,
                               page_breaks=breaks, token_count=len(token_spans(text))), shift


def _is_session(unit: Unit) -> bool:
    """Code that runs something at the prompt (">>> print(factorial(-2))") rather than defining it."""
    return unit.kind == "code" and unit.text.lstrip().startswith(">>>")


def _needs_code_before(ev: Evidence) -> bool:
    """A sentence pointing back at code its chunk does not hold ("This operation is called …" first in its
    chunk, the method it names at the end of the chunk before), or holds only a run of ("This program
    demonstrates a guardian" after ">>> print(factorial(-2))": the program is further up)."""
    if ev.unit.kind != "sentence" or not refers_back(ev.unit.text):
        return False
    return not any(u.kind == "code" and not _is_session(u) for u in _units_before(ev))


def widened(evidence: list[Evidence], chunks_of, *, chunks_widened: int = 6,
            first_steps: bool = False) -> list[Evidence]:
    """The evidence with the hits of its best `chunks_widened` chunks continued to their section's end (or
    CONTINUED_CHARS more) and, when a sentence of it points back at code the chunk before holds (`refers_back`),
    begun with that chunk; `chunks_of(doc_id)` lists a document's chunks in order. With `first_steps` (a how-to), a
    later numbered step's chunk is begun where its procedure's step 1 is (`_with_first_step`)."""
    wide: dict[str, tuple[SearchHit, int]] = {}
    out = []
    for ev in evidence:
        cid = ev.hit.chunk.chunk_id
        if cid not in wide and len(wide) < chunks_widened:
            chunks = chunks_of(ev.hit.chunk.doc_id)
            chunk, shift = preceded(ev.hit.chunk, chunks) if _needs_code_before(ev) else \
                _with_first_step(ev, chunks) if first_steps and is_later_step(ev) else (ev.hit.chunk, 0)
            chunk = continued(chunk, chunks)     # a joined chunk keeps its id and ends as its own text did
            wide[cid] = (dataclasses.replace(ev.hit, chunk=chunk), shift)
        if cid in wide:
            hit, shift = wide[cid]
            unit = dataclasses.replace(ev.unit, start=ev.unit.start + shift, end=ev.unit.end + shift)
            if ev.unit.kind == "sentence" and not ev.hit.chunk.text[ev.unit.end:].strip():
                unit = _finished(unit, hit.chunk)
            out.append(dataclasses.replace(ev, hit=hit, unit=unit))
        else:
            out.append(ev)
    return out


def _with_first_step(ev: Evidence, chunks: list[Chunk]) -> tuple[Chunk, int]:
    """A later numbered step's chunk joined with as few chunks before it as bring its procedure's step 1 in
    (`numbered_opening`), up to NUMBERED_CHUNKS_BACK; its own chunk when step 1 is in it or not within reach."""
    for back in range(NUMBERED_CHUNKS_BACK + 1):
        chunk, shift = preceded(ev.hit.chunk, chunks, back)
        if back and not shift:
            break                       # nothing more joins: the section's start, or chunks that do not line up
        moved = dataclasses.replace(ev.unit, start=ev.unit.start + shift, end=ev.unit.end + shift)
        if numbered_opening(dataclasses.replace(ev, hit=dataclasses.replace(ev.hit, chunk=chunk), unit=moved)):
            return chunk, shift
    return ev.hit.chunk, 0


def _finished(unit: Unit, chunk: Chunk) -> Unit:
    """A sentence the chunk's end cut off ("‘[[...]]’ is the operator"), finished in the continued chunk (" used to
    select a single element, whereas …"): the units of the longer text over it and the rest of its last one."""
    units = split_units(chunk.text, chunk.context_prefix)
    last = next((u for u in units if u.start < unit.end <= u.end), None)
    if last is None or last.end <= unit.end or last.kind != "sentence":
        return unit
    over = [u for u in units if u.end > unit.start and u.start < last.end]
    return Unit(min(unit.start, over[0].start), last.end, "sentence", " ".join(u.text for u in over))


def _units_before(ev: Evidence) -> list[Unit]:
    """The units before `ev`'s in its chunk, in order."""
    return [u for u in split_units(ev.hit.chunk.text, ev.hit.chunk.context_prefix) if u.end <= ev.unit.start]


# "E.g.:", "For example:", "例如：": a cue that says only that code follows, not what it is
BARE_CUE_MAX_CHARS = 14


def introduction(ev: Evidence) -> Unit | None:
    """The sentence right before a code unit, when there is one: it says what the code is. A bare cue ("E.g.:") comes
    with the sentence before it in its paragraph ("Runs the whileBlock while cond evaluates to True. E.g.:")."""
    if ev.unit.kind != "code":
        return None
    units = _units_before(ev)
    before = units[-1] if units else None
    if not (before and before.kind == "sentence" and len(before.text) <= 400 and not is_instruction(before.text)):
        return None
    earlier = units[-2] if len(units) >= 2 else None
    if len(before.text.strip()) <= BARE_CUE_MAX_CHARS and earlier is not None and earlier.kind == "sentence" and \
            "\n\n" not in ev.hit.chunk.text[earlier.end:before.start] and not is_instruction(earlier.text):
        return Unit(earlier.start, before.end, "sentence", f"{earlier.text} {before.text}")
    return before


# A list item ("- 大模型模块：…", "2. Open the file", "（3）…") is one of several: the list is the answer to "what are
# the parts / the steps", so an item quoted alone shows the list it belongs to.
_LIST_ITEM = re.compile(r"^\s*(?:[-*•·]\s|\d{1,2}[.)、]\s?|[（(]\d{1,2}[）)])")
LIST_ITEMS_BEFORE = 12


def is_list_item(unit: Unit) -> bool:
    return unit.kind == "sentence" and bool(_LIST_ITEM.match(unit.text))


def _list_before(ev: Evidence) -> list[Unit]:
    """A list item's earlier items (the list's, up to LIST_ITEMS_BEFORE), in order; none for another unit."""
    if not is_list_item(ev.unit):
        return []
    items: list[Unit] = []
    for unit in reversed(_units_before(ev)):
        if not is_list_item(unit) or len(items) >= LIST_ITEMS_BEFORE:
            break
        items.insert(0, unit)
    return items


def _code_before(ev: Evidence) -> list[Unit]:
    """The code a sentence comes right after, when the sentence says what it is or does ("This operation is
    called a type-based dispatch because …" under the method that does it): the example it names. A sentence
    pointing back ("This program demonstrates …", `refers_back`) reaches the code over up to
    BACK_REFERENCE_REACH sentences between, which come with it."""
    if ev.unit.kind != "sentence":
        return []
    text = ev.hit.chunk.text
    before = _units_before(ev)
    if not before:
        return []
    if before[-1].kind == "code" and not text[before[-1].end:ev.unit.start].strip():
        return (_with_program(before[:-1], before[-1]) if refers_back(ev.unit.text) else []) + [before[-1]]
    if not refers_back(ev.unit.text):
        return []
    for k in range(1, BACK_REFERENCE_REACH + 1):
        if len(before) <= k:
            break
        between = before[-k:]
        if any(u.kind != "sentence" for u in between) or sum(len(u.text) for u in between) > 400:
            break
        if before[-k - 1].kind == "code":
            code = _code_joined([u for u in before[:-k] if u.kind == "code" or u is before[-k - 1]], text)[-1]
            return _with_program(before[:-k - 1], code) + [code, *between]
    return []


PROGRAM_REACH_CHARS = 1200   # how much of the runs and their output may stand between a program and the sentence


def _with_program(earlier: list[Unit], code: Unit) -> list[Unit]:
    """When the code a sentence points back at only runs something (`_is_session`), the program it runs and the
    runs and output between: the units from the nearest code that defines something, if that is near enough."""
    if not _is_session(code):
        return []
    for k in range(len(earlier) - 1, -1, -1):
        unit = earlier[k]
        if unit.kind == "code" and not _is_session(unit):
            shown = earlier[k:]
            return shown if sum(len(u.text) for u in shown) <= PROGRAM_REACH_CHARS else [unit]
    return []


def grow_quote(cited, unit_text: str, worked: "Worked", chunk: Chunk | None = None) -> None:
    """The citation's quote, which ends with the unit, grows into the example the unit begins: the quote a
    citation highlights is what the answer shows of it. With the `chunk` shown, its pages grow with it too (a
    procedure from its step 1 on page 17 to its step 8 on page 18 cites both)."""
    if cited.quote.endswith(unit_text):
        cited.quote = cited.quote[:len(cited.quote) - len(unit_text)] + worked.quote
    if chunk is None or worked.span is None or cited.page_start is None:
        return
    page_start, page_end = chunk.pages_of_span(*worked.span)
    if page_start is not None:
        cited.page_start, cited.page_end = min(cited.page_start, page_start), max(cited.page_end, page_end)


@dataclasses.dataclass(frozen=True)
class Worked:
    """An example as the answer shows it: its units in order, as Markdown, and as one quote to cite; `span`: where
    its units stand in the chunk's text (start of the first, end of the last)."""
    markdown: str
    quote: str
    span: tuple[int, int] | None = None


# A sentence that says a worked example begins: "我们举个例子。", "以西瓜数据集为例，", "For example, suppose …"
_EXAMPLE_OPENING = re.compile(r"举个例子|举一个例子|举例来说|举例说明|看一个例子|看个例子|以[^，。；]{1,20}为例|(?:例如|比如)[:：]\s*$|"
                              r"^(?:for example|for instance|as an example)\b|\bconsider the following\b|"
                              r"\bhere is an example\b|\blet'?s (?:look at|take|consider|see) an? (?:\w+ )?example\b",
                              re.IGNORECASE)
EXAMPLE_REACH_CHARS = 900     # how far back in its section a sentence may look for where its example begins


def example_opening(ev: Evidence) -> list[Unit]:
    """For a sentence inside a worked example (the printer one's "操作部门联络学校的 ICT 联络人…", its fourth step),
    the sentences from the one that begins the example ("为了对…有个概念，我们举个例子。") up to it; none when no
    such sentence is near before it in its section."""
    if ev.unit.kind != "sentence" or _EXAMPLE_OPENING.search(ev.unit.text):
        return []
    return _back_to(ev, _EXAMPLE_OPENING, EXAMPLE_REACH_CHARS, sentences_only=True)


def _back_to(ev: Evidence, opening: re.Pattern, reach_chars: int, *, sentences_only: bool) -> list[Unit]:
    """The units from the nearest sentence before `ev`'s unit in its section that `opening` finds, up to the unit;
    none when there is none within `reach_chars`, or an exercise, an instruction (or, `sentences_only`, anything but
    a sentence) comes first."""
    before = units_before(ev.unit, ev.hit.chunk.text, ev.hit.chunk.context_prefix)
    reach = 0
    for k in range(len(before) - 1, -1, -1):
        unit = before[k]
        reach += len(unit.text)
        if (sentences_only and unit.kind != "sentence") or is_instruction(unit.text) or is_exercise(unit.text) or \
                reach > reach_chars:
            return []
        if unit.kind == "sentence" and opening.search(unit.text):
            return before[k:]
    return []


# A sentence that is a later step of steps ("You can finally test a forced shutdown …", "最后，…"), and one that begins
# them ("The first step is to see how upsdrvctl will behave …", "首先，…"). Data, tested in test_worked.
LATER_STEP_WORDS = ("finally", "lastly", "after that", "afterwards", "the next step", "the last step", "the second step",
                    "最后", "然后", "接着", "第二步", "下一步")
FIRST_STEP_WORDS = ("the first step", "first,", "first of all", "to begin", "start by", "首先", "第一步")
_LATER_STEP = re.compile(r"(?:\b|^)(?:" + "|".join(map(re.escape, LATER_STEP_WORDS)) + ")", re.IGNORECASE)
_FIRST_STEP = re.compile(r"(?:\b|^)(?:" + "|".join(map(re.escape, FIRST_STEP_WORDS)) + ")", re.IGNORECASE)
STEPS_REACH_CHARS = 900       # how far back in its section a later step may look for the first

# A sentence that announces the steps that follow ("Here are the steps that occur when a critical power event
# happens …:", "安装步骤如下："): the steps are shown whole, up to STEPS_LIMIT_FACTOR times an example's length (the
# NUT manual's eight shutdown steps had been cut after the second). Data, tested in test_worked.
STEP_ANNOUNCING_WORDS = ("steps", "procedure", "as follows", "sequence of", "stages", "步骤", "流程", "过程", "如下")
_ANNOUNCES_STEPS = re.compile("(?:" + "|".join(rf"\b{re.escape(w)}\b" if w.isascii() else re.escape(w)
                                               for w in STEP_ANNOUNCING_WORDS) + r").*[:：]\s*$", re.IGNORECASE)
STEPS_LIMIT_FACTOR = 2.5


def announces_steps(unit: Unit) -> bool:
    return unit.kind == "sentence" and bool(_ANNOUNCES_STEPS.search(unit.text))


def steps_opening(ev: Evidence) -> list[Unit]:
    """For a sentence that is a later step ("You can finally test a forced shutdown sequence using:"), the units from
    the one beginning the steps ("The first step is to see how upsdrvctl will behave …", its command and what it
    shows) up to it; none when no such sentence is near before it in its section."""
    if ev.unit.kind != "sentence" or not _LATER_STEP.search(ev.unit.text) or _FIRST_STEP.search(ev.unit.text):
        return []
    return _back_to(ev, _FIRST_STEP, STEPS_REACH_CHARS, sentences_only=False)    # the steps' commands come along


# A numbered step ("7. 除 sample2e.tex 外…", "3) Run make", "（2）…") is one of a procedure the book numbers. A how-to's
# lead that is a later step is shown from the procedure's first step ("1. 首先确认你可以执行 tex 程序："), when that is
# near before it in its section: u7z-015's eight steps of testing an installation had been shown 7, 8, 5, 6, 2, 3.
_NUMBERED_STEP = re.compile(r"^\s*(?:(\d{1,2})[.)、．]|[（(](\d{1,2})[）)])\s*(?=\S|$)")
NUMBERED_REACH_CHARS = 2400    # how far back in its section a later step may look for the first
NUMBERED_CHUNKS_BACK = 3       # chunks joined before a later step's to reach it (widened)


def step_number(unit: Unit) -> tuple[int, str] | None:
    """A numbered item's number and its marker's style ("#.", "(#)"), the item's text or its number alone (an
    English "2. Open the file." is split into "2." and its sentence); None for any other unit."""
    m = _NUMBERED_STEP.match(unit.text) if unit.kind == "sentence" else None
    if not m:
        return None
    return int(m.group(1) or m.group(2)), re.sub(r"\d+", "#", m.group().strip())


def _lead_step(ev: Evidence) -> tuple[tuple[int, str] | None, list[Unit], int]:
    """The lead's step number (its own, or that of the number alone right before it), the units before the lead,
    and how many of them come before that number (all of them, or all but the number alone)."""
    before = units_before(ev.unit, ev.hit.chunk.text, ev.hit.chunk.context_prefix)
    number = step_number(ev.unit)
    if number is None and before and not _NUMBERED_STEP.sub("", before[-1].text).strip():
        return step_number(before[-1]), before, len(before) - 1
    return number, before, len(before)


def is_later_step(ev: Evidence) -> bool:
    number = _lead_step(ev)[0]
    return number is not None and number[0] >= 2


def numbered_opening(ev: Evidence) -> list[Unit]:
    """For a later numbered step, the units from its procedure's step 1 up to it (with the lead's own number alone,
    if it had one): walking back, each item of its marker's style numbered below the one after it, within
    NUMBERED_REACH_CHARS; none when the walk meets an exercise, an item out of order (another list) or the
    section's start first."""
    number, before, searched = _lead_step(ev)
    if number is None or number[0] < 2:
        return []
    expected, style = number
    reach = 0
    for k in range(searched - 1, -1, -1):
        reach += len(before[k].text)
        if reach > NUMBERED_REACH_CHARS or is_exercise(before[k].text):
            return []
        item = step_number(before[k])
        if item is None or item[1] != style:
            continue
        if item[0] >= expected:
            return []
        expected = item[0]
        if expected == 1:
            return before[k:]
    return []


# A line pointing to other pages ("References: upsmon(8), upsmon.conf(5)", "See also: …", "参见：…") ends an
# explanation: what it names is not read here. Data, tested in test_worked.
POINTER_LABELS = ("references", "reference", "see also", "further reading", "参见", "参考", "另见", "相关链接")
_POINTER_LINE = re.compile(r"^\s*(?:" + "|".join(map(re.escape, POINTER_LABELS)) + r")\s*[:：]", re.IGNORECASE)


def is_pointer_line(text: str) -> bool:
    return bool(_POINTER_LINE.match(text))


# Words that open a sentence by pointing back at the one before it ("This program was created separately so …",
# "所以…"): as an answer's first sentence it says nothing without that one. Data, tested in test_worked.
REFERRING_OPENERS_EN = ("this", "these", "that", "those", "it", "its", "they", "their", "such", "thus", "hence",
                        "so", "therefore", "here", "however", "otherwise", "likewise", "similarly", "the latter",
                        "the former", "for the latter reason", "for the former reason", "as a result", "in this case",
                        "in that case", "because of this", "the two")
REFERRING_OPENERS_ZH = ("这", "那", "它", "其", "该", "此", "因此", "所以", "但是", "然而", "否则", "同样", "两者", "二者",
                        "前者", "后者")
_REFERS_BACK = re.compile(r"^(?:(?:" + "|".join(REFERRING_OPENERS_EN) + r")\b|" + "|".join(REFERRING_OPENERS_ZH) + ")",
                          re.IGNORECASE)
ANTECEDENT_MAX_CHARS = 400
_STARTS_MIDWAY = re.compile(r"^[a-z，、；：,;:)）]")


def antecedent(ev: Evidence) -> Unit | None:
    """The sentence right before a sentence that opens by pointing back at it, in the same section: "The outboard
    design … was intended to reduce the load on the average system." before "This program was created separately
    so …". None when the sentence stands on its own, or what precedes it is not a sentence to show (code, a
    question, a list's introduction, an exercise, an instruction to the reader, a heading between)."""
    # a sentence saying how "the two" differ points back at where the book named them
    if ev.unit.kind != "sentence" or not (_REFERS_BACK.match(ev.unit.text.lstrip(" *•-")) or
                                          states_the_difference(ev.unit.text)):
        return None
    before = units_before(ev.unit, ev.hit.chunk.text, ev.hit.chunk.context_prefix)[-1:]
    # a chunk may begin mid-sentence ("define further local dependencies …"): a piece is no sentence to show
    if not before or before[0].kind != "sentence" or len(before[0].text) > ANTECEDENT_MAX_CHARS or \
            _STARTS_MIDWAY.match(before[0].text) or \
            before[0].text.rstrip().endswith(("?", "？", ":", "：")) or is_instruction(before[0].text) or \
            is_exercise(before[0].text):
        return None
    return before[0]


# A lead in the middle of its paragraph goes on from the sentences before it: "Note that the order of redirections is
# significant. For example, the command" before "ls > dirlist 2>&1 directs both …"; the version rules before "重命名该
# 上游源代码为 gentoo-0.9.12~rc99.tar.gz". Of the points a learner's answer missed while the retrieved passages held
# them, more stood in the lead's chunk before it than after it. They are shown, nearest last, up to this long.
PARAGRAPH_BEFORE_CHARS = 500     # 300: 16 sets without a model 1,186 -> 1,201; 500: 1,204; 800: 1,204


def paragraph_before(ev: Evidence) -> list[Unit]:
    """The sentences before the lead in its paragraph (no blank line or heading between), in order, whole, up to
    PARAGRAPH_BEFORE_CHARS; none for a lead opening its paragraph, or when the sentence before is a question, an
    instruction, an exercise or a piece of a sentence the chunk cut."""
    if ev.unit.kind != "sentence":
        return []
    text, kept, pos, used = ev.hit.chunk.text, [], ev.unit.start, 0
    for unit in reversed(units_before(ev.unit, text, ev.hit.chunk.context_prefix)):
        if unit.kind != "sentence" or "\n\n" in text[unit.end:pos] or \
                used + len(unit.text) > PARAGRAPH_BEFORE_CHARS or _STARTS_MIDWAY.match(unit.text) or \
                unit.text.rstrip().endswith(("?", "？")) or is_instruction(unit.text) or is_exercise(unit.text):
            break
        kept.insert(0, unit)
        used, pos = used + len(unit.text), unit.start
    return kept


# A paragraph that opens by going on from steps ("接下来直接将相应的 -dev 版本的软件包名称放到 Build-Depends 项内。",
# "Then run …") comes after them: the steps before it, each an instruction and its command ("要手工地找到 … 可以执行" /
# "$ objdump -p /usr/bin/foo | grep NEEDED"), across the blank lines between them. Data, tested in test_worked.
GOES_ON_WORDS = ("then", "next", "after that", "now", "接下来", "然后", "接着")
_GOES_ON = re.compile(r"^(?:(?:" + "|".join(re.escape(w) for w in GOES_ON_WORDS if w.isascii()) + r")\b|" +
                      "|".join(re.escape(w) for w in GOES_ON_WORDS if not w.isascii()) + ")", re.IGNORECASE)
STEPS_BEFORE_CHARS = 600


def steps_before(first: Unit, ev: Evidence) -> list[Unit]:
    """When `first` (the lead, or the first sentence shown before it) opens by going on from steps, those steps: the
    pairs of a sentence and the code right after it before `first` in its section, nearest last, up to
    STEPS_BEFORE_CHARS; else, right after an instruction ending with a colon and its code, that step; none when
    what comes right before is not such a pair."""
    if first.kind != "sentence":
        return []
    # a paragraph right after a command and the instruction that gives it ("1. 首先确认你可以执行 tex 程序：" /
    # "> tex --version") tells what it returns ("如果返回的结果是 ‘command not found’ …"): that one step comes first
    goes_on = bool(_GOES_ON.match(first.text.lstrip(" *•-")))
    before = units_before(first, ev.hit.chunk.text, ev.hit.chunk.context_prefix)
    kept: list[Unit] = []
    k = len(before) - 1
    while k >= 1 and before[k].kind == "code" and before[k - 1].kind == "sentence":
        pair, said = before[k - 1:k + 1], before[k - 1].text.rstrip()
        if sum(len(u.text) for u in kept + pair) > STEPS_BEFORE_CHARS or is_instruction(said) or is_exercise(said) or \
                said.endswith(("?", "？")) or not (goes_on or said.endswith((":", "："))):
            break
        kept[:0] = pair
        if not goes_on:
            break
        k -= 2
    return kept


def worked_example(ev: Evidence, limit: int, mark: str, *, lead_bold: bool = True, code_only: bool = False,
                   shown: set[tuple[str, int]] | None = None, from_opening: bool = False,
                   others: tuple[str, ...] = (), lead_context: bool = False, compared: bool = False,
                   entry_of: tuple[str, ...] = (), case_before: Unit | None = None,
                   from_first_step: bool = False) -> Worked:
    """The unit with what follows it in its section — sentences and code blocks whole — until about `limit`
    characters are shown (past it only to reach the example's first code, up to twice it; a code block begun
    inside the limit is shown whole); a code unit with the sentence introducing it above, a sentence with the
    code it comes right after. `code_only`: what follows is shown only when it reaches code (a supporting
    quote grows into its example, not into more prose). `shown` holds (chunk id, unit start) of what the
    answer already shows: a unit there ends the example, and the units shown here are added to it.
    `from_opening`: a sentence inside a worked example is shown from where the example begins (`example_opening`).
    `others`: the other things a comparison names; a unit opening with one of them is about it and ends this one
    ("TEXMFLOCAL 系统管理员用来…" goes on no further than "TEXMFHOME 给用户存放…"); `compared`: the unit is part of a
    comparison, which takes the code above it only when it points back at it; `entry_of`: the side's names, written
    in symbols, whose entry ("* ($*) Expands to …") the unit is in: the side ends with its entry, not in the next
    ones ("\\# ($#) Expands to the number of positional parameters"). `lead_context`: the answer's lead
    is shown with what it needs before it: from the first of the steps it is a later one of ("You can finally test …"
    after "The first step is …"), or after the sentence it points back at ("This program was created separately so
    …"), else after `case_before`, the sentence before it when that is the other case of a pair."""
    shown = set() if shown is None else shown
    cid = ev.hit.chunk.chunk_id
    intro = introduction(ev)
    # a comparison side's sentence takes the code above it only when it points back at it: the ups.conf entry just
    # before "To start and stop drivers, use upsdrvctl or upsdrvsvcctl" is no side's example
    code_before = _code_before(ev) if not compared or refers_back(ev.unit.text) else []
    if lead_context and code_before:
        # the lead tells what the command before it returns: the instruction giving the command comes too ("1. 首先
        # 确认你可以执行 tex 程序：" above "> tex --version" above "如果返回的结果是 ‘command not found’ …")
        giving = introduction(dataclasses.replace(ev, unit=code_before[0]))
        if giving is not None and giving.text.rstrip().endswith((":", "：")):
            code_before = [giving, *code_before]
    before = [*code_before, intro, *_list_before(ev)]
    if from_opening and not any(before):
        before = example_opening(ev)
    # what the lead needs before it: the first of its steps, else the sentence it points back at, else its paragraph;
    # and before all that, the steps it goes on from
    context: list[Unit] = []
    numbered = numbered_opening(ev) if lead_context and from_first_step and not any(before) else []
    if lead_context and not any(before):
        context = numbered or steps_opening(ev) or [u for u in (antecedent(ev), case_before) if u][:1] \
            or paragraph_before(ev)
        context = steps_before(context[0] if context else ev.unit, ev) + context
    if context:
        before = context
    units = [u for u in before if u and (cid, u.start) not in shown] + [ev.unit]
    head = len(units)
    used = sum(len(u.text) for u in units)
    shows_code = any(u.kind == "code" for u in units)
    text = ev.hit.chunk.text
    in_entry = any(in_entry_of(text, ev.unit.start, name) for name in entry_of)
    end = ev.unit.end
    steps_announced = bool(numbered) or not code_only and any(announces_steps(u) for u in units)
    for unit in _code_joined(units_after(ev.unit, text, ev.hit.chunk.context_prefix), text):
        # an explanation or example ends where the book's exercises begin
        if is_instruction(unit.text) or (cid, unit.start) in shown or is_exercise(unit.text) or \
                opens_with(unit.text, others) or is_pointer_line(unit.text) or \
                in_entry and "\n\n" in text[end:unit.start]:
            break
        end = unit.end
        # a figure's <div><img …> says nothing a person can read, nor a music example's glyphs the PDF gave as
        # letters ("h h ª P h h T")
        if is_markup(unit.text) or is_wordless(unit):
            continue
        # past the limit, only to reach an example's first code (within twice the limit), and a code block
        # begun inside the limit is shown whole
        room = 2 * limit if not shows_code or (unit.kind == "code" and used < limit) else limit
        if steps_announced:
            room = max(room, int(STEPS_LIMIT_FACTOR * limit))
        if used + len(unit.text) > room:
            break
        units.append(unit)
        used += len(unit.text)
        shows_code = shows_code or unit.kind == "code"
        steps_announced = steps_announced or (not code_only and announces_steps(unit))
        if shows_code and used > limit and not steps_announced:
            break
    # a supporting quote grows only into code, unless it announces what follows ("包括以下流程：", "the steps are:")
    # or is one item of a list, which is shown whole
    announces = ev.unit.text.rstrip().endswith((":", "：")) or is_list_item(ev.unit)
    if code_only and not announces and not any(u.kind == "code" for u in units[head:]):
        units = units[:head]
    shown.update((cid, u.start) for u in units)
    # what comes before a sentence lead (its context, the code it follows) leaves the lead (the last unit before
    # `head`) in bold; a code lead's introduction, an example's opening, is the one in bold
    bold_at = head - 1 if context or (code_before and ev.unit.kind == "sentence") else 0
    return Worked(_markdown(units, mark, lead_bold, bold_at=bold_at), " ".join(u.text for u in units),
                  (min(u.start for u in units), max(u.end for u in units)))


def opens_with(text: str, names: tuple[str, ...]) -> bool:
    """Whether the text begins with one of the names, an article before it allowed ("A tuple is …")."""
    head = re.sub(r"^(?:a|an|the)\s+", "", text.lstrip(" *•-"), flags=re.IGNORECASE).casefold()
    return any(name and head.startswith(name.casefold()) for name in names)


def _code_joined(units: list[Unit], text: str) -> list[Unit]:
    """Code units with nothing but white space between them as one block: a function the splitter cut at an
    indentation step ("else:" / "    d[c] += 1") is one piece of code, shown whole or not at all."""
    out: list[Unit] = []
    for unit in units:
        last = out[-1] if out else None
        if last and last.kind == unit.kind == "code" and not text[last.end:unit.start].strip():
            out[-1] = Unit(last.start, unit.end, "code", text[last.start:unit.end].strip("\n"))
        else:
            out.append(unit)
    return out


_LIST_MARKER = re.compile(r"^\s*(?:[•\-*·]|\d{1,3}[.)、]|[a-z][.)])\s*")


def bold(text: str) -> str:
    """A sentence in bold as the answer's lead, its own Markdown bold taken out: a Markdown book's "通过计算 **Query** 与
    **Key** 的相关性…" wrapped whole in ** read as bold, plain, bold, and the lead was cut at its first inner ** when the
    model's opening had said it."""
    return f"**{text.replace('**', '')}**"


def _markdown(units: list[Unit], mark: str, lead_bold: bool, bold_at: int = 0) -> str:
    """Sentences run together as prose, code fenced, table rows one a line; the first sentence (the one at `bold_at`)
    in bold and the citation mark after the first prose (never after a closing fence, which would then not close)."""
    blocks: list[str] = []
    prose: list[str] = []

    def end_prose():
        if prose:
            blocks.append(" ".join(prose) + ("" if any(mark in b for b in blocks) else f" {mark}"))
            prose.clear()

    items: list[str] = []

    def end_list():
        if items:
            blocks.append("\n".join(items))
            items.clear()

    marker = ""         # a step's number the PDF put on a line of its own ("1." over "The UPS goes on battery")
    for i, unit in enumerate(units):
        if is_list_item(unit) and not _LIST_MARKER.sub("", unit.text).strip():
            marker = unit.text.strip()  # its item follows, or a page break left it without one ("3.")
            continue
        if marker and unit.kind == "sentence" and not is_list_item(unit):
            unit = Unit(unit.start, unit.end, "sentence", f"{marker} {unit.text}")
        marker = ""
        if is_list_item(unit):          # a list stays a list: an item a line
            end_prose()
            items.append(unit.text.strip())
            continue
        end_list()
        if unit.kind == "sentence":
            prose.append(bold(unit.text) if i == bold_at and lead_bold else unit.text)
            continue
        end_prose()
        blocks.append(f"```\n{unit.text}\n```" if unit.kind == "code" else rows_as_markdown(unit.text))
    end_list()
    end_prose()
    if not any(mark in b for b in blocks):
        if units and is_list_item(units[-1]):    # after the list's last item, not on a line of its own
            blocks[-1] += f" {mark}"
        else:
            blocks.append(mark)
    return "\n\n".join(blocks)
