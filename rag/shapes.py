"""How each kind of question is answered: the shape a good tutor gives it, from the document's own words.

- lookup: the sentence that answers, then a few that back it (rag.answer.extractive_answer);
- explain / why: the definition or the reason first, with the sentences that carry it on, then support;
- example / how-to: the book's code or steps whole, under the sentence that introduces them, with what follows
  them in the section (rag.worked);
- compare: each side (two or more) retrieved on its own and set side by side, a sentence naming them all first;
- summarize: the scope's sections in order, one key sentence each, then its key terms (rag.summary).
With a model, the model writes a short opening in plain words (`Shape.instruction`, checked sentence by
sentence) and the same answer from the book's words follows it under "From the book" (rag.answer.add_book_answer).
A lookup's model answer is followed only by the quotes it did not say. Every line is cited.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace

from core.nlp import has_verb
from core.text import search_tokens
from rag.answer import citation_for, citation_place, widen_citation
from rag.evidence import Evidence, in_entry_of, paragraph_span, units_after, units_before
from rag.summary import Digest, KeySentence
from rag.types import Answer, Citation, SearchHit
from rag.worked import antecedent, bold, grow_quote, opens_with, worked_example


@dataclass(frozen=True)
class Shape:
    kind: str
    budget: int                 # characters of the extractive answer, quotes included
    max_quotes: int             # supporting quotes after the lead
    lead_sentences: int         # sentences after the best unit shown with it
    instruction: str            # what a composing model is asked to do, beyond citing (English)
    instruction_zh: str
    max_tokens: int             # a local model's longest answer
    worked_chars: int = 0       # each quote shown with what follows it in its section, about this long (rag.worked)
    from_first_step: bool = False   # a lead that is a later numbered step is shown from step 1 (rag.worked)

    def instruction_for(self, zh: bool) -> str:
        return self.instruction_zh if zh else self.instruction


# One quote more than the first layouts had (lookup 3, explain/why/how-to 3, example 2): of the key points the
# no-model answers missed while the retrieved passages held them, most stood in units scored within 0.6 of the best
# but ranked past the quotes shown. 16 sets without a model 1,204 -> 1,226 of 1,574, none lost; answer length p50
# 981 -> 1,040 characters. Comparisons (their own two sides) and summaries (sections) gained nothing from it; a
# comparison's side shown 450 characters long (350 before): compare questions 168 -> 174 of 207 points, their answers'
# length p50 1,358 -> 1,503 (500: the same points, 1,519).
SHAPES: dict[str, Shape] = {
    "lookup": Shape("lookup", 600, 4, 0, "", "", 160),
    "explain": Shape("explain", 1000, 4, 2, "In two or three plain sentences: first what it is, then how it works.",
                     "用两三句通俗的话解释：先说它是什么，再说它如何起作用。", 150, worked_chars=600),
    "why": Shape("why", 1000, 4, 2, "In two or three sentences: the reason first, then why it holds.",
                 "用两三句话：先说原因，再解释。", 150, worked_chars=600),
    "howto": Shape("howto", 1100, 4, 2, "Give the steps in order, briefly. Do not copy long code: the book's code "
                   "is shown under your answer.", "简要地按顺序给出步骤。不要照抄长代码：书中的代码会显示在你的回答下面。",
                   150, worked_chars=900, from_first_step=True),
    "example": Shape("example", 1100, 3, 1, "In two or three sentences, say what the sources' example shows: the "
                     "example itself is shown under your answer.", "用两三句话说明来源中的例子说明了什么：例子本身会显示在"
                     "你的回答下面。", 150, worked_chars=900),
    "compare": Shape("compare", 1000, 2, 1, "In two or three sentences, say how they differ and when to use which.",
                     "用两三句话说明它们的区别，以及各自适用的情况。", 150, worked_chars=450),
    "summarize": Shape("summarize", 1600, 5, 0, "Say in two or three sentences what this part teaches overall.",
                       "用两三句话概括这部分主要讲了什么。", 200),
}


def shape_of(kind: str) -> Shape:
    return SHAPES.get(kind, SHAPES["lookup"])


def hit_of(chunk, doc_name: str, doc_title: str) -> SearchHit:
    """A chunk as a hit, to cite it (summaries cite chunks they did not retrieve)."""
    return SearchHit(chunk=chunk, doc_name=doc_name, doc_title=doc_title, score=1.0, rank=1)


class _Citations:
    """Citations numbered in order of first use, one per chunk — and, in a document without pages, one per section
    of a chunk: a source is labelled by the section of its quote ("§ 4.2 Fill"), and a summary quoting three
    sections of one chunk cited them all as its first ("§ 4.1 Draw")."""

    def __init__(self):
        self.items: list[Citation] = []
        self._by_place: dict[tuple, Citation] = {}

    def mark(self, hit: SearchHit, quote: str, support: float | None = None) -> str:
        place = citation_place(hit.chunk, quote)
        cited = self._by_place.get(place)
        if cited is None:
            cited = citation_for(len(self.items) + 1, hit, quote=quote, support=support)
            self.items.append(cited)
            self._by_place[place] = cited
        elif quote not in cited.quote:
            widen_citation(cited, citation_for(cited.n, hit, quote=quote))
        return f"[{cited.n}]"


def _pages(a: int | None, b: int | None, zh: bool) -> str:
    if a is None:
        return ""
    if zh:
        return f"第 {a} 页" if a == b or b is None else f"第 {a}–{b} 页"
    return f"p. {a}" if a == b or b is None else f"pp. {a}–{b}"


# -- summarize -------------------------------------------------------------------------------------------

def summary_answer(question: str, digest: Digest, doc_name: str, doc_title: str, *, zh: bool,
                   overview: str = "") -> Answer:
    """The digest as an answer: a line naming the scope, an overview if a model wrote one, each section with
    its key sentence (cited), then the key terms."""
    cites = _Citations()
    pages = _pages(digest.page_start, digest.page_end, zh)
    n = len([s for s in digest.sections if s.name])       # sections, not runs of pages
    if zh:
        head = f"**{digest.title}**" + (f"（{pages}）" if pages else "") + (f"共 {n} 节：" if n > 1 else "：")
    else:
        head = f"**{digest.title}**" + (f" ({pages})" if pages else "") + (f" covers {n} sections:" if n > 1 else ":")
    lines = [head]
    if digest.topics:      # what the whole scope is about, in its own words (rag.summary._scope_topics)
        names = ("、" if zh else ", ").join(digest.topics)
        lines.append(f"**主要讲：** {names}" if zh else f"**Mostly about:** {names}")
    if overview:
        lines.append(overview)
    bullets = []
    for section in digest.sections:
        said = " ".join(f"{s.text} {cites.mark(hit_of(s.chunk, doc_name, doc_title), s.text)}"
                        for s in section.sentences)
        if not section.name:      # a run of pages of a chapter without sections (rag.summary._by_pages)
            label = f"**{_pages(section.page_start, section.page_end, zh)}**"
        else:
            where = _pages(section.page_start, section.page_start, zh)
            label = f"**{section.name}**" + ((f"（{where}）" if zh else f" ({where})") if where else "")
        # its sub-sections, the names a reference section has entries for (rag.summary.listed_entries), and what
        # else it teaches in its own words (rag.summary.section_topics)
        for names, label_zh, label_en in ((section.subsections, "含", "sections"), (section.entries, "条目", "entries"),
                                          (section.topics, "还讲到", "also")):
            if names:
                listed = ("、" if zh else ", ").join(names)
                said = (f"{said} " if said else "") + (f"（{label_zh}：{listed}）" if zh else f"({label_en}: {listed})")
        bullets.append(f"- {label}{'：' if zh else ': '}{said}" if said else f"- {label}")
    lines.append("\n".join(bullets))
    if digest.terms:
        first: KeySentence = digest.terms[0][1]
        mark = cites.mark(hit_of(first.chunk, doc_name, doc_title), first.text)
        names = ("、" if zh else ", ").join(term for term, _ in digest.terms)
        lines.append(f"**{'关键术语' if zh else 'Key terms'}{'：' if zh else ':'}** {names} {mark}")
    return Answer(question=question, text="\n\n".join(lines), citations=cites.items, mode="extractive")


def digest_sources(digest: Digest) -> list[tuple[str, KeySentence]]:
    """The digest's lines a model reads to write an overview: (section name, its key sentence)."""
    return [(section.name, s) for section in digest.sections for s in section.sentences]


# -- compare ---------------------------------------------------------------------------------------------

# the sentence naming every side goes on this many times as far as one side's does: it is the book's own comparison
BOTH_SIDES_CHARS_FACTOR = 2


def compare_answer(question: str, sides: tuple[str, ...], side_evidence: tuple[list[Evidence], ...],
                   both: list[Evidence], *, zh: bool, side_chars: int = 0) -> Answer | None:
    """A sentence naming every side first (when the passages have one), then each side's best passage, labelled.
    None when neither side has a passage (the caller answers as for any question). `side_chars`: each side's
    sentence goes on with what follows it in its section, about this long (rag.worked): what a side is, then
    what it does."""
    cites = _Citations()
    lines, used = [], set()
    used_units: set[tuple[str, int]] = set()
    lead_said = ""          # what the sentence naming every side showed, on one line (`_flat`)
    if both:
        ev = both[0]
        if side_chars:
            # the book's own comparison goes on with what it says of them ("三种：METAPOST、PSTricks 和 PGF，它们的特点
            # 如下。" then how each works), about twice a side's length; after the sentence it points back at, if any
            mark = cites.mark(ev.hit, ev.unit.text, ev.score)
            shown = worked_example(ev, BOTH_SIDES_CHARS_FACTOR * side_chars, mark, shown=used_units, lead_context=True,
                                   compared=True)
            grow_quote(next(c for c in cites.items if f"[{c.n}]" == mark), ev.unit.text, shown, ev.hit.chunk)
            lines.append(shown.markdown)
            lead_said = _flat(shown.quote)
        else:
            # "This solution also adds the upsdrvsvcctl script …" comes after the sentence it points back at
            earlier = antecedent(ev)
            quote = f"{earlier.text} {ev.unit.text}" if earlier else ev.unit.text
            before = f"{earlier.text} " if earlier else ""
            lines.append(f"{before}{bold(ev.unit.text)} {cites.mark(ev.hit, quote, ev.score)}")
        used.add(ev.unit.text)
        used_units.add((ev.hit.chunk.chunk_id, ev.unit.start))
    found = 0
    picked: list[tuple[list[str], Evidence]] = []
    for name, evidence in zip(sides, side_evidence):
        # a side whose best sentence another side already shows is named with it ("…的误差称为训练误差，在新样本上的
        # 误差称为泛化误差" defines both): dropping it would lose the side, showing the sentence twice says nothing
        shared = next((names for names, ev in picked if evidence and ev.unit.text == evidence[0].unit.text), None)
        if shared is not None:
            shared.append(name)
            continue
        # a label line without a verb that does not open with the side's name points elsewhere ("References: man
        # pages: nutupsdrv(8), upsdrvctl(8)"); the side's entry ("tuple: an immutable sequence") does not
        # nor one the lead already went on into (read from another copy of its chunk, its offsets are not the lead's)
        unused = [ev for ev in evidence if ev.unit.text not in used and
                  (ev.hit.chunk.chunk_id, ev.unit.start) not in used_units and _flat(ev.unit.text) not in lead_said]
        chosen = [next((ev for ev in unused if not _points_elsewhere(ev.unit.text, name)), unused[0])] if unused else []
        if chosen:
            used.add(chosen[0].unit.text)
            picked.append(([name], chosen[0]))
    if side_chars:
        # a side whose own best sentence does not open with its name takes the book's entry for it where another
        # side's sentence runs into one ("• Suggests 此项中的软件包…" right after Recommends' line)
        for k, (names, ev) in enumerate(picked):
            if not opens_with(ev.unit.text, tuple(names)):
                entry = _entry_opening(ev, names) or _entry_beside(tuple(names), picked, 2 * side_chars)
                if entry is not None and entry.unit.text not in used:
                    used.add(entry.unit.text)
                    picked[k] = (names, entry)
    # one side's sentence goes on only up to the other side's: "A list is mutable … A tuple is immutable" would
    # say the tuple's line twice
    used_units.update((ev.hit.chunk.chunk_id, ev.unit.start) for _, ev in picked)
    said: list[tuple[int, list[str], str]] = []    # (line, names, what it quotes) of each side shown so far
    joiner = "、" if zh else ", "
    for names, ev in picked:
        found += 1
        label = _bold_names(names, joiner) + ("：" if zh else ": ")
        if side_chars:
            # a side whose sentence another side's passage already went on into (chunks overlap: "… is called the
            # link function" ends the linear predictor's passage) is named with that side, not quoted twice
            earlier = next((k for k, (_, _, quote) in enumerate(said) if _flat(ev.unit.text) in quote), None)
            if earlier is not None:
                line, earlier_names, quote = said[earlier]
                lines[line] = lines[line].replace(_bold_names(earlier_names, joiner),
                                                  _bold_names([*earlier_names, *names], joiner), 1)
                said[earlier] = (line, [*earlier_names, *names], quote)
                continue
            mark = cites.mark(ev.hit, ev.unit.text, ev.score)
            others = tuple(side for side in sides if side not in names)
            shown = worked_example(ev, side_chars, mark, lead_bold=False, shown=used_units, others=others,
                                   compared=True, entry_of=tuple(names))
            grow_quote(next(c for c in cites.items if f"[{c.n}]" == mark), ev.unit.text, shown, ev.hit.chunk)
            said.append((len(lines), list(names), _flat(shown.quote)))
            lines.append(label + ("\n\n" if shown.markdown.startswith("```") else "") + shown.markdown)
            continue
        lines.append(f"{label}{_short(ev.unit.text)} {cites.mark(ev.hit, ev.unit.text, ev.score)}")
    if not found and not both:
        return None
    return Answer(question=question, text="\n\n".join(lines), citations=cites.items, mode="extractive")


_LABEL = re.compile(r"^[^\W\d][\w ]{0,30}[:：]\s")


def _bold_names(names: list[str], joiner: str) -> str:
    """A side's label in bold, a name written in symbols as code: "**$***" would read as bold and a stray star."""
    return "**" + joiner.join(name if search_tokens(name) else f"`{name}`" for name in names) + "**"


def _flat(text: str) -> str:
    """The text as one line of lower case: a sentence found again where a chunk's overlap cut it differently."""
    return " ".join(text.split()).lower()


def _points_elsewhere(text: str, name: str) -> bool:
    """A label and what it names, without a verb ("References: man pages: upsdrvctl(8)", "See also: …"), unless
    the label is the side's own name."""
    return bool(_LABEL.match(text)) and not opens_with(text, (name,)) and not has_verb(text)


ENTRY_LOOK_BACK = 3


def _entry_beside(names: tuple[str, ...], picked: list[tuple[list[str], Evidence]], reach: int) -> Evidence | None:
    """A unit opening with one of these names: one of the ENTRY_LOOK_BACK units before the side's own sentence, or
    the first within `reach` characters after another side's sentence, in its chunk: the book's own entry for this
    side, in the list both sides are entries of."""
    for other, ev in picked:
        if other == list(names):
            # its own entry may begin a few sentences before it: "pdfTEX 在 ε-TEX 扩展的基础上构建… 它的主页在…"
            before = units_before(ev.unit, ev.hit.chunk.text, ev.hit.chunk.context_prefix)[-ENTRY_LOOK_BACK:]
            entry = next((unit for unit in reversed(before) if opens_with(unit.text, names)), None)
            if entry is not None:
                return replace(ev, unit=entry)
            continue
        read = 0
        for unit in units_after(ev.unit, ev.hit.chunk.text, ev.hit.chunk.context_prefix):
            read += len(unit.text)
            if read > reach:
                break
            if opens_with(unit.text, names):
                return replace(ev, unit=unit)
    return None


def _entry_opening(ev: Evidence, names: list[str]) -> Evidence | None:
    """The first sentence of the entry the side's sentence is in, when the side is written in symbols and the entry
    opens with it ("@ ($@) Expands to the positional parameters" for "When the expansion occurs within double quotes,
    … each parameter expands to a separate word"); None when the sentence opens it or is in no entry of the side."""
    text = ev.hit.chunk.text
    if not any(in_entry_of(text, ev.unit.start, name) for name in names):
        return None
    begin, _ = paragraph_span(text, ev.unit.start)
    opening = next((unit for unit in units_before(ev.unit, text, ev.hit.chunk.context_prefix)
                    if unit.start >= begin), None)
    return replace(ev, unit=opening) if opening is not None else None


def _short(text: str, limit: int = 400) -> str:
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0] + " …"
