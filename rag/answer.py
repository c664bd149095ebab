"""Turning retrieved passages into what a person reads.

Three kinds of answer, chosen by `rag.tool.RAGTool.ask_stream`:
- **not in your documents** — the evidence (rag.evidence) is too weak: say so plainly, in the
  question's language, and list the closest passages as related;
- **extractive** (no LLM) — a short answer first (the unit that best answers the question), then up
  to three supporting quotes, each cited; code stays code, no sentence twice, no table of contents;
- **composed** (an LLM) — passages labelled [n] go to the model, which answers with [n] citations;
  the text streams, and each cited sentence is then checked against its passage.
Citations are numbered 1..n in the order the answer first uses them.
"""
from __future__ import annotations

import dataclasses

import difflib
import re
from collections.abc import Iterator
from dataclasses import dataclass

from core.text import STOPWORDS, count_tokens, detect_language, search_tokens
from rag import prompts
from rag.evidence import (QUESTION_PHRASING, Evidence, SentenceCheck, Unit, answer_sentences, is_exercise, split_units,
                          terms_of, units_after, units_before)
from rag.injection import is_instruction
from rag.rows import as_markdown as rows_as_markdown
from rag.support import check as support_check
from rag.types import CITATION_MARK, Answer, Citation, SearchHit
from rag.worked import Worked, antecedent, bold, grow_quote, introduction, is_pointer_line, worked_example

MAX_SHORT_ANSWER_CHARS = 320
QUOTE_MAX_CHARS = 300             # a supporting quote; the whole sentence is in its source's passage
LIST_MAX_CHARS = MAX_SHORT_ANSWER_CHARS   # the items a quoted sentence introduces ("…包括：")
_INTRODUCES = re.compile(r"[:：]\s*(?:$|[•·▪‣◦●○■□*–-]\s)")
_CODE_TOKEN = re.compile(r"[\x21-\x7e]*[=/$%.\\][\x21-\x7e]*")      # ASCII, no space, with a code symbol
_LIST_ITEM = re.compile(r"^\s*(?:[•·▪‣◦●○■□*–-]\s|\(?\d{1,2}[.)、]\s?|[a-z][.)]\s)")   # "• 列出…", "2. 会计", "(a) …"
EXTRACTIVE_BUDGET_CHARS = 600     # the answer and its quotes together, before citation marks


def has_words(text: str) -> bool:
    """Whether an answer says anything besides its citation markers."""
    return bool(re.search(r"\w", CITATION_MARK.sub("", text)))


@dataclass
class Source:
    """One passage as the answer's prompt or quotes number it: [n] → the hit and the text used."""
    n: int
    hit: SearchHit
    text: str                 # the excerpt shown to the LLM / quoted (the whole chunk or part of it)
    support: float = 0.0      # its best evidence score


def source_label(n: int, hit: SearchHit) -> str:
    section = " > ".join(hit.chunk.heading_path[-2:])
    parts = [f"[{n}] {hit.doc_name}", hit.pages_label, section]
    return " · ".join(p for p in parts if p)


def citation_for(n: int, hit: SearchHit, quote: str | None = None, support: float | None = None) -> Citation:
    """A citation of the hit; when quoting part of it, the pages are those of the quoted part."""
    page_start, page_end = hit.chunk.page_start, hit.chunk.page_end
    if quote is not None and (at := hit.chunk.text.find(quote.split("\n")[-1][:80])) >= 0:
        page_start, page_end = hit.chunk.pages_of_span(at, at + len(quote))
    return Citation(n=n, doc_id=hit.chunk.doc_id, doc_name=hit.doc_name, page_start=page_start,
                    page_end=page_end, chunk_id=hit.chunk.chunk_id, score=round(hit.score, 4),
                    quote=quote if quote is not None else hit.chunk.text,
                    support=None if support is None else round(support, 3))


def widen_citation(cited: Citation, other: Citation) -> None:
    """A second quote of the same source added to its citation: the quote joined on, the pages widened."""
    cited.quote += " … " + other.quote
    if cited.page_start is not None and other.page_start is not None:
        cited.page_start, cited.page_end = min(cited.page_start, other.page_start), max(cited.page_end, other.page_end)


# -- sources for a prompt ---------------------------------------------------------------------------------

def whole_chunk_sources(hits: list[SearchHit], budget_tokens: int, evidence: list[Evidence]) -> list[Source]:
    """Whole chunks, best first, until the budget is spent (the first always fits): for endpoints
    with room to read."""
    best = _best_score_per_chunk(evidence)
    sources, used = [], 0
    for hit in hits:
        cost = hit.chunk.token_count + 12  # the source label
        if sources and used + cost > budget_tokens:
            continue
        text = f"{hit.chunk.context_prefix}\n{hit.chunk.text}" if hit.chunk.context_prefix else hit.chunk.text
        sources.append(Source(len(sources) + 1, hit, text, best.get(hit.chunk.chunk_id, 0.0)))
        used += cost
    return sources


FOCUSED_MIN_RELATIVE = 0.8


def focused_sources(evidence: list[Evidence], budget_tokens: int, *, max_sources: int = 4,
                    min_relative: float = FOCUSED_MIN_RELATIVE) -> list[Source]:
    """For a small local model, whose time goes into reading the prompt: from each of the best chunks,
    only its best unit with its neighbours, until the budget is spent. A chunk whose best unit answers
    much worse than the best one is left out: a small model copies whichever source it reads, however
    unrelated."""
    chosen: dict[str, Source] = {}
    used = 0
    for ev in evidence:
        cid = ev.hit.chunk.chunk_id
        if cid in chosen or len(chosen) >= max_sources:
            continue
        if chosen and ev.score < min_relative * evidence[0].score:
            break
        excerpt = _window(ev)
        cost = count_tokens(excerpt) + 12
        if chosen and used + cost > budget_tokens:
            continue
        chosen[cid] = Source(len(chosen) + 1, ev.hit, excerpt, ev.score)
        used += cost
    return list(chosen.values())


def _window(ev: Evidence, *, max_tokens: int = 110) -> str:
    """The unit with the sentences around it, as long as the window stays under max_tokens. A sentence that
    addresses the assistant (rag.injection) is left out: the model never reads it."""
    units = [u for u in split_units(ev.hit.chunk.text, ev.hit.chunk.context_prefix)
             if u.start == ev.unit.start or not is_instruction(u.text)]
    at = next((i for i, u in enumerate(units) if u.start == ev.unit.start), None)
    if at is None:
        return ev.unit.text
    lo = hi = at
    text = units[at].text
    while True:
        grown = False
        for j in (lo - 1, hi + 1):
            if 0 <= j < len(units):
                candidate = " ".join(u.text for u in units[min(lo, j):max(hi, j) + 1])
                if count_tokens(candidate) <= max_tokens:
                    lo, hi, text, grown = min(lo, j), max(hi, j), candidate, True
        if not grown:
            return text


def _best_score_per_chunk(evidence: list[Evidence]) -> dict[str, float]:
    best: dict[str, float] = {}
    for ev in evidence:
        best.setdefault(ev.hit.chunk.chunk_id, ev.score)
    return best


def build_messages(question: str, sources: list[Source], *, system: str, history: list[dict] | None = None,
                   memory_context: str | None = None, bare_labels: bool = False, instruction: str = "") -> list[dict]:
    """System prompt first and identical every time, so a local model reuses its cached reading of it.
    `bare_labels`: sources as "[n] text" only — a small model copies file names and pages into its answer."""
    context = "\n\n".join(f"[{s.n}] {_fenced(' '.join(s.text.split()))}" if bare_labels else
                           f"{source_label(s.n, s.hit)}\n{_fenced(s.text)}" for s in sources)
    messages = [{"role": "system", "content": system}]
    if memory_context:
        messages.append({"role": "system", "content": prompts.MEMORY_CONTEXT.format(memory=memory_context)})
    for turn in (history or [])[-4:]:
        if turn.get("role") in ("user", "assistant") and isinstance(turn.get("content"), str):
            messages.append({"role": turn["role"], "content": turn["content"][:1500]})
    messages.append({"role": "user", "content": prompts.ANSWER_USER.format(
        context=context, question=question, instruction=f"\n{instruction}" if instruction else "",
        language_hint=language_hint(question, [s.text for s in sources]))})
    return messages


def _fenced(text: str) -> str:
    """A passage between triple quotes, as quoted material (a quote mark run inside it cannot close the fence)."""
    return '"""' + text.replace('"""', '" " "') + '"""'


def language_hint(question: str, passages: list[str]) -> str:
    """Asks for the answer in the question's language: always for Chinese (a small model drifts into
    English), for English when the passages are in another language (an English question about a Chinese
    book)."""
    if detect_language(question) == "zh":
        return prompts.ANSWER_IN_CHINESE
    if passages and detect_language(" ".join(p[:200] for p in passages)) != "en":
        return prompts.ANSWER_IN_ENGLISH
    return ""


# -- citation numbers in order of appearance -----------------------------------------------------------------

class CitationRenumberer:
    """Rewrites [k] (the prompt's numbering) to 1..n in order of first use, while the text streams.
    A piece ending in the middle of a "[12" is held back until the bracket closes. With `keep_numbers`
    it only drops numbers no source stands behind, so the streamed text matches the passages list
    shown before it (numbered as in the prompt); the final text is renumbered once at the end."""

    def __init__(self, valid: set[int], *, keep_numbers: bool = False):
        self.valid = valid
        self.keep_numbers = keep_numbers
        self.order: list[int] = []     # prompt numbers, in order of first use
        self._pending = ""

    def _map(self, m: re.Match) -> str:
        k = int(m.group(1))
        if k not in self.valid:
            return ""                  # a number with no source behind it is dropped, not shown
        if k not in self.order:
            self.order.append(k)
        return f"[{k}]" if self.keep_numbers else f"[{self.order.index(k) + 1}]"

    def feed(self, piece: str) -> str:
        text = self._pending + piece
        cut = text.rfind("[")
        if cut != -1 and "]" not in text[cut:] and len(text) - cut <= 5:
            text, self._pending = text[:cut], text[cut:]
        else:
            self._pending = ""
        return CITATION_MARK.sub(self._map, text)

    def flush(self) -> str:
        rest, self._pending = self._pending, ""
        if re.fullmatch(r"\[\d*", rest):   # the model stopped inside a citation ("… 间隔最大。 [1"): it cites nothing
            return ""
        return CITATION_MARK.sub(self._map, rest)


def renumber(text: str, valid: set[int]) -> tuple[str, list[int]]:
    """The whole text renumbered at once; returns (text, prompt numbers in order of first use)."""
    r = CitationRenumberer(valid)
    out = r.feed(text) + r.flush()
    return out, r.order


# -- the three kinds of answer ---------------------------------------------------------------------------------

def evidence_citations(evidence: list[Evidence], limit: int) -> list[Citation]:
    """The best unit of each of the first `limit` passages of the evidence, as citations numbered from 1."""
    cited, seen = [], set()
    for ev in evidence:
        if ev.hit.chunk.chunk_id not in seen and len(cited) < limit:
            seen.add(ev.hit.chunk.chunk_id)
            cited.append(citation_for(len(cited) + 1, ev.hit, quote=ev.unit.text, support=ev.score))
    return cited


def refusal(question: str, evidence: list[Evidence], hits: list[SearchHit], *, max_related: int = 3,
            unknown_words: list[str] = (), untranslated: bool = False) -> Answer:
    """'Not in your documents', with the closest passages as related reading; naming the question's
    words that no passage of the library contains, when there are any. `untranslated`: every document is in
    the other language and the question was not translated: that is said instead (none of its words could
    be in them)."""
    zh = detect_language(question) == "zh"
    related = evidence_citations(evidence, max_related)
    if not related:
        related = [citation_for(i, h) for i, h in enumerate(hits[:max_related], start=1)]
    text = prompts.NOT_IN_DOCUMENTS_ZH if zh else prompts.NOT_IN_DOCUMENTS
    if untranslated:
        text += prompts.OTHER_LANGUAGE_ONLY_ZH if zh else " " + prompts.OTHER_LANGUAGE_ONLY
    elif unknown_words:
        words = ("、" if zh else ", ").join(f"“{w}”" for w in unknown_words[:3])
        never = prompts.NEVER_MENTIONED_ZH if zh else " " + prompts.NEVER_MENTIONED
        text += never.format(words=words)
    return Answer(question=question, text=text, citations=[], mode="none", refused=True, related=related)


def _near_duplicate(a: str, b: str) -> bool:
    ta, tb = set(terms_of(a)), set(terms_of(b))
    if not ta or not tb:
        return a.strip() == b.strip()
    return len(ta & tb) / min(len(ta), len(tb)) >= 0.8


REPEAT_MIN_TERMS = 4        # "It is mutable." after "A list is mutable …" may be a point made again on purpose
REPEAT_SHARE = 0.9


def _repeats(claim: str, said: set[str]) -> bool:
    """Whether the claim is one of the sentences said before written again, cut or reworded: nearly all of its
    terms (at least REPEAT_MIN_TERMS) are in one of them. A small model, cut off by its token budget, began its
    list a second time and stopped mid-way ("这将包括：- 客户端计算机的配置和管理 … [1] 你需要为学校提供", u6z-019)."""
    return len(set(terms_of(claim))) >= REPEAT_MIN_TERMS and any(
        _already_said(claim, earlier, REPEAT_SHARE) for earlier in said)


def _already_said(unit: str, said: str, share: float = 0.8) -> bool:
    """Most (`share`) of the unit's terms are in what the answer says. Not the other way round: a short answer
    ("2007年赛季") whose few terms all come from the unit has not said the rest of it (the match it names)."""
    tu, ts = set(terms_of(unit)), set(terms_of(said))
    if not tu:
        return unit.strip() in said
    return len(tu & ts) / len(tu) >= share


def _completes(longer: str, shorter: str) -> bool:
    """`longer` is `shorter` with its cut-off beginning (or end) restored."""
    return len(longer) > len(shorter) and " ".join(shorter.split()) in " ".join(longer.split())


def _shown(unit: Unit, limit: int = MAX_SHORT_ANSWER_CHARS) -> str:
    if unit.kind == "code":
        return f"```\n{unit.text}\n```"
    if unit.kind == "table":
        return rows_as_markdown(unit.text)
    text = unit.text
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0] + " …"


def _with_example(ev: Evidence, limit: int = MAX_SHORT_ANSWER_CHARS) -> str:
    """A sentence that introduces what follows ("… like this:", "包括以下流程：") is shown with it: the code
    block, or the list items and sentences after it, up to about `limit` characters more."""
    shown = _shown(ev.unit, limit)
    if ev.unit.kind != "sentence" or not _introduces(ev.unit.text):
        return shown
    after = units_after(ev.unit, ev.hit.chunk.text, ev.hit.chunk.context_prefix)
    if after and after[0].kind == "code":
        return f"{shown}\n\n```\n{after[0].text}\n```"
    items = _list_items(after, int(limit * 1.5))
    return shown + ("\n" + "\n".join(items) if items else "")


def _introduces(sentence: str) -> bool:
    """Whether the sentence introduces a list: it ends with a colon, or the splitter joined the list's first item to
    it ("它的功能包括： • 列出方案…；"). A line of code ending in its own colon introduces nothing
    ("TEXINPUTS=.:/my/macro/dir:", a search path; "%:", a Makefile rule)."""
    return bool(_INTRODUCES.search(sentence)) and not _CODE_TOKEN.fullmatch(sentence.strip())


def _list_items(units: list[Unit], limit: int) -> list[str]:
    """The sentences a colon introduces, up to `limit` characters; a list that starts with bullets or numbers
    ends at the first sentence without one (not the running head or caption after it)."""
    items: list[str] = []
    bulleted = False
    for unit in units:
        if unit.kind != "sentence" or is_instruction(unit.text) or sum(len(i) for i in items) + len(unit.text) > limit:
            break
        if bulleted and not _LIST_ITEM.match(unit.text):
            break
        bulleted = bulleted or (not items and bool(_LIST_ITEM.match(unit.text)))
        items.append(unit.text)
    return items


def _continuation(ev: Evidence, sentences: int, limit: int, opening: re.Pattern | None = None) -> str:
    """The sentences that follow the unit in its passage, up to `limit` characters: an explanation goes on
    after its first sentence ("A tuple is a sequence of values. … The important difference is that tuples are
    immutable."). `opening`: only while each follows on so (_goes_on). A sentence that introduces a list ("它的
    功能包括：") brings the list's items, up to LIST_MAX_CHARS: "tlmgr 都能干些啥" was answered with the colon and
    none of the five things."""
    out: list[str] = []
    after = units_after(ev.unit, ev.hit.chunk.text, ev.hit.chunk.context_prefix)
    for k, unit in enumerate(after[:sentences]):
        if unit.kind != "sentence" or unit.text.rstrip().endswith(("?", "？")) or is_instruction(unit.text) or \
                is_exercise(unit.text) or is_pointer_line(unit.text) or \
                sum(len(t) for t in out) + len(unit.text) > limit or \
                (opening is not None and not opening.match(unit.text)):
            break
        out.append(unit.text)
        if _introduces(unit.text):
            out += _list_items(after[k + 1:], max(limit, LIST_MAX_CHARS))
            break
    return " ".join(out)


# A sentence that goes on about the quoted one's subject ("它必须以数字开头 (0-9)。", "It must start with a
# digit."): the quote is not whole without it
_GOES_ON = re.compile(r"^(?:(?:it|they|its|their|this|these)\b|它|其|该|此|这)", re.IGNORECASE)
GOES_ON_SENTENCES = 2


def _goes_on(ev: Evidence, limit: int) -> str:
    """The sentences right after a quoted sentence that go on about its subject, up to `limit` characters."""
    if ev.unit.kind != "sentence" or _introduces(ev.unit.text):
        return ""           # a sentence introducing what follows is shown with it (_with_example)
    return _continuation(ev, GOES_ON_SENTENCES, limit, _GOES_ON)


# A sentence right before the lead that opens as the lead does and answers nearly as well is the other case of a
# pair ("If a command is not found, … 127." before "If a command is found but is not executable, … 126."): the lead
# is shown after it.
CASE_BEFORE_MARGIN = 0.08
_FIRST_WORD = re.compile(r"\W*(\w+)")


def _case_before(ev: Evidence, evidence: list[Evidence]) -> Unit | None:
    """The sentence just before the lead in its paragraph, opening with the lead's first word, when the evidence
    scores it within CASE_BEFORE_MARGIN of the lead."""
    if ev.unit.kind != "sentence":
        return None
    before = units_before(ev.unit, ev.hit.chunk.text, ev.hit.chunk.context_prefix)[-1:]
    if not before or before[0].kind != "sentence" or "\n\n" in ev.hit.chunk.text[before[0].end:ev.unit.start] or \
            _introduces(before[0].text):
        return None
    opening, lead_opening = _FIRST_WORD.match(before[0].text), _FIRST_WORD.match(ev.unit.text)
    if not opening or not lead_opening or opening.group(1).lower() != lead_opening.group(1).lower():
        return None
    # by its text: the evidence may hold the sentence from the overlapping chunk before
    close = any(other.unit.text == before[0].text and other.score >= ev.score - CASE_BEFORE_MARGIN
                for other in evidence)
    return before[0] if close else None


def _names_the_rest(question: str, ev: Evidence, limit: int) -> str:
    """The sentence right after the lead when it names what the question asks and the lead does not: "what do OL,
    OB and LB mean?" was answered "OL means your system is running on line power." without the next sentence,
    "If it says something else (like OB — on battery, or LB — low battery), …"."""
    if ev.unit.kind != "sentence" or _introduces(ev.unit.text):
        return ""
    missing = _asked_words(question) - _words(ev.unit.text)
    if not missing:
        return ""
    after = units_after(ev.unit, ev.hit.chunk.text, ev.hit.chunk.context_prefix)[:1]
    if not after or after[0].kind != "sentence" or len(after[0].text) > limit or \
            is_instruction(after[0].text) or is_exercise(after[0].text) or is_pointer_line(after[0].text):
        return ""
    named = missing & _words(after[0].text)
    return after[0].text if len(named) >= min(NAMES_THE_REST_MIN_WORDS, len(missing)) else ""


NAMES_THE_REST_MIN_WORDS = 2


def _words(text: str) -> set[str]:
    return set(search_tokens(text))   # lower-cased already


def _asked_words(question: str) -> set[str]:
    return {t for t in _words(question) if len(t) >= 2 and t not in STOPWORDS and t not in QUESTION_PHRASING}


def _introduction(ev: Evidence) -> str:
    """The sentence right before a code unit, when it introduces it ("… like this:", "例如："): shown above it."""
    intro = introduction(ev)
    return intro.text if intro else ""


def answering_units(evidence: list[Evidence], *, max_quotes: int = 3, min_relative: float = 0.6) -> list[Evidence]:
    """The units that answer: the best, then up to `max_quotes` nearly as good, none repeating another."""
    chosen: list[Evidence] = []
    for ev in evidence:
        if chosen and (len(chosen) > max_quotes or ev.score < min_relative * chosen[0].score):
            break
        twin = next((k for k, c in enumerate(chosen) if _near_duplicate(ev.unit.text, c.unit.text)), None)
        if twin is None:
            chosen.append(ev)
        elif _completes(ev.unit.text, chosen[twin].unit.text) or _goes_further(ev, chosen[twin]):
            # the same sentence whole: an overlapping chunk starts mid-sentence ("族的教宗…"); or the same sentence
            # where its passage goes on: the chunk before ends with it, "… for at least two reasons."
            chosen[twin] = dataclasses.replace(ev, score=max(ev.score, chosen[twin].score))
    return chosen


def _goes_further(ev: Evidence, twin: Evidence) -> bool:
    """Whether `ev` is `twin`'s very sentence in the next, overlapping chunk of its document, with more after it."""
    a, b = ev.hit.chunk, twin.hit.chunk
    return ev.unit.text == twin.unit.text and a.doc_id == b.doc_id and a.ordinal == b.ordinal + 1 and \
        len(a.text) - ev.unit.end > len(b.text) - twin.unit.end


_HEADING_LINE = re.compile(r"^#{1,6}\s+(.+?)\s*$", re.MULTILINE)


def citation_place(chunk, quote: str) -> tuple:
    """What one citation number stands for: a chunk — and, in a document without pages, the section of the chunk
    the quote sits under. A source is labelled by its quote's section ("§ 4.2 Fill"), and three sides of a
    comparison in one chunk were all labelled with its first heading ("§ apt"). A summary's chunk is a piece of
    one under one heading (rag.outline), with the whole chunk's id: its heading path tells the pieces apart."""
    if chunk.page_start is not None:
        return (chunk.chunk_id,)
    at = chunk.text.find(quote[:60])
    headings = _HEADING_LINE.findall(chunk.text[:at]) if at > 0 else []
    return chunk.chunk_id, tuple(chunk.heading_path), headings[-1] if headings else ""


def extractive_answer(question: str, evidence: list[Evidence], *, max_quotes: int = 3,
                      min_relative: float = 0.6, budget: int = EXTRACTIVE_BUDGET_CHARS,
                      lead_sentences: int = 0, worked_chars: int = 0, from_opening: bool = False,
                      from_first_step: bool = False) -> Answer:
    """The best unit as the short answer, then up to `max_quotes` supporting units nearly as good,
    none repeating another, each cited in order of appearance. `lead_sentences`: the sentences after the
    best unit shown with it (an explanation, a reason); code is shown under the sentence introducing it.
    `worked_chars`: each unit is shown with what follows it — an example's code and sentences whole
    (rag.worked) — about this long for the first, half of it for the others. `from_opening` (an example asked
    for): the first is shown from where its worked example begins; `from_first_step` (a how-to): the first, when
    a later numbered step, from its procedure's step 1."""
    chosen = _within_budget(answering_units(evidence, max_quotes=max_quotes, min_relative=min_relative), budget)
    numbers: dict[tuple, int] = {}
    citations: list[Citation] = []
    lines: list[str] = []
    worked_shown: set[tuple[str, int]] = set()
    for i, ev in enumerate(chosen):
        if i and _already_said(ev.unit.text, "\n\n".join(lines)):   # shown as the first unit's example or continuation
            continue
        cid, place = ev.hit.chunk.chunk_id, citation_place(ev.hit.chunk, ev.unit.text)
        if place not in numbers:
            numbers[place] = len(numbers) + 1
            citations.append(citation_for(numbers[place], ev.hit, quote=ev.unit.text, support=ev.score))
        else:   # a second unit of the same source widens its quote and page range
            c = citations[numbers[place] - 1]
            widen_citation(c, citation_for(c.n, ev.hit, quote=ev.unit.text))
        shown, mark = _with_example(ev), f"[{numbers[place]}]"
        if worked_chars:
            if (cid, ev.unit.start) in worked_shown:      # inside an example already shown
                continue
            worked = worked_example(ev, worked_chars if i == 0 else worked_chars // 2, mark, lead_bold=i == 0,
                                    code_only=i > 0, shown=worked_shown, from_opening=from_opening and i == 0,
                                    lead_context=i == 0, case_before=_case_before(ev, evidence) if i == 0 else None,
                                    from_first_step=from_first_step)
            # a supporting quote grows only into code, or into the next sentence when that names the rest of what
            # is asked ("OL means … line power." then "If it says something else (like OB — on battery, …)")
            rest = _names_the_rest(question, ev, QUOTE_MAX_CHARS) if i and worked.quote == ev.unit.text else ""
            if rest and worked.markdown == f"{ev.unit.text} {mark}" and not _already_said(rest, "\n\n".join(lines)):
                worked = Worked(f"{ev.unit.text} {rest} {mark}", f"{ev.unit.text} {rest}")
            grow_quote(citations[numbers[place] - 1], ev.unit.text, worked, ev.hit.chunk)
            lines.append(worked.markdown)
            continue
        more = _continuation(ev, lead_sentences, budget // 2) if i == 0 and lead_sentences else \
            _goes_on(ev, QUOTE_MAX_CHARS // 2) or _names_the_rest(question, ev, QUOTE_MAX_CHARS)
        intro = _introduction(ev) if i == 0 else ""
        pointed_at = antecedent(ev) if i == 0 and not intro else None
        if i == 0 and not intro and pointed_at is None:
            pointed_at = _case_before(ev, evidence)
        earlier = pointed_at.text if pointed_at else ""
        if more or intro or earlier:   # the quote a citation highlights is all the answer shows of it
            cited = citations[numbers[place] - 1]
            cited.quote = " ".join(x for x in (intro or earlier, cited.quote, more) if x)
        if intro:
            lines.append(f"{intro} {mark}\n\n{shown}")
        elif i == 0 and "```" not in shown and ev.unit.kind != "table":
            lead = f"{bold(shown)} {more} {mark}" if more else f"{bold(shown)} {mark}"
            lines.append(f"{earlier} {lead}" if earlier else lead)
        elif i == 0 and ev.unit.kind == "sentence":
            head, _, rest = shown.partition("\n")
            lines.append(f"{bold(head)} {mark}\n{rest}")
        else:
            lines.append(_quote(ev, mark, more))
    return Answer(question=question, text="\n\n".join(lines), citations=citations, mode="extractive")


def _within_budget(chosen: list[Evidence], budget: int = EXTRACTIVE_BUDGET_CHARS) -> list[Evidence]:
    """The short answer always; supporting quotes while the whole stays readable at a glance (a filing's
    sentences and table rows run to hundreds of characters each)."""
    kept, used = chosen[:1], sum(len(_shown(ev.unit)) for ev in chosen[:1])
    for ev in chosen[1:]:
        size = len(_shown(ev.unit, QUOTE_MAX_CHARS))
        if used + size > budget:
            continue          # too long for what is left: a shorter one after it may still fit
        used += size
        kept.append(ev)
    return kept


def _quote(ev: Evidence, mark: str, more: str = "") -> str:
    """A supporting unit under an answer: a sentence as a block quote (a long one cut at a word) with `more`
    after it, code and table rows as they are."""
    shown = _with_example(ev, QUOTE_MAX_CHARS)
    if "```" in shown or ev.unit.kind == "table":
        return f"{shown}\n\n{mark}"
    return f"> {shown} {more} {mark}" if more else f"> {shown} {mark}"


def add_supporting_quote(answer: Answer, evidence: list[Evidence], *, budget: int = EXTRACTIVE_BUDGET_CHARS,
                         worked_chars: int = 0) -> str:
    """Under a composed answer, the document's own words that answer best — the units the extractive
    answer would show, within the same length budget — leaving out what the answer already says: the
    learner reads the source, not only a small model's paraphrase of it, which may drop or swap a word
    (a 0.5B model writes "毕业于上海交通大学" over a passage that says 香港中文大学). Returns the added text."""
    said = CITATION_MARK.sub("", answer.text).replace("⚠", "")
    if not evidence or not said.strip():
        return ""
    quotes: list[tuple[Evidence, str]] = []   # each with what it goes on with
    used = len(said)
    # an example question's answer shows the book's example whole (rag.worked) unless the model copied all of its
    # code exactly (a small model's own code block is often a garbled copy: "fibonacci n 4 fibonacci n 3 …")
    worked = (evidence[0].hit.chunk.chunk_id, evidence[0].unit.start) \
        if worked_chars and not _copies_code(answer.text, evidence[0], worked_chars) else None
    for ev in answering_units(evidence):
        if (ev.hit.chunk.chunk_id, ev.unit.start) == worked:
            quotes.append((ev, ""))
            continue
        # a quote the answer said only the start of is still shown: "tlmgr 都能干些啥" was answered with three of the
        # five things its list names, and the quote holding all five was left out as said
        goes_on = _goes_on(ev, QUOTE_MAX_CHARS // 2)
        if _already_said(f"{_with_example(ev, QUOTE_MAX_CHARS)} {goes_on}", said):
            continue
        size = len(_shown(ev.unit, QUOTE_MAX_CHARS)) + len(goes_on)
        # the best unit not said yet is shown whatever the model's answer took of the budget: a long answer about the
        # wrong passages ("~/.bashrc" for a login shell) had left no room for "it looks for ~/.bash_profile, … in that
        # order", and one that said the best unit (MySQL's driver) none for the next ("… has four table drivers: CSV …")
        if used + size > budget and quotes:
            continue          # too long for what is left (a code block, a table): a shorter one may still fit
        used += size
        quotes.append((ev, goes_on))     # with what it goes on with ("它的功能包括：" and the list)
    added = ""
    for ev, goes_on in quotes:
        quoted = f"{ev.unit.text} {goes_on}" if goes_on else ev.unit.text
        cited = next((c for c in answer.citations if c.chunk_id == ev.hit.chunk.chunk_id), None)
        if cited is None:
            cited = citation_for(len(answer.citations) + 1, ev.hit, quote=quoted, support=ev.score)
            answer.citations.append(cited)
        elif ev.unit.text not in cited.quote:
            cited.quote += " … " + quoted
        if (ev.hit.chunk.chunk_id, ev.unit.start) == worked:
            shown = worked_example(ev, worked_chars, f"[{cited.n}]", lead_bold=False)
            cited.quote = shown.quote if cited.quote == ev.unit.text else f"{cited.quote} … {shown.quote}"
            added += "\n\n" + shown.markdown
        else:
            added += "\n\n" + _quote(ev, f"[{cited.n}]", goes_on)
    answer.text += added
    return added


BOOK_HEADING = "**From the book**"
BOOK_HEADING_ZH = "**书中原文**"
_BOOK_MARK = re.compile(r"(?<!\S)\[(\d+)\](?=\s|$)")   # a citation after a space, not code's a[1]


def add_book_answer(answer: Answer, book: Answer, *, zh: bool) -> str:
    """Under a model's opening, the answer in the question's shape from the document's own words (rag.shapes):
    the learner gets the plain-words explanation and the book's sentences, examples and sides whole, which a
    small model's paraphrase drops or garbles. The book's citations are numbered on from the model's, one number
    per chunk; a quoted sentence the opening already says is left out. Returns the added text."""
    said = CITATION_MARK.sub("", answer.text).replace("⚠", "")
    numbers: dict[int, int] = {}
    for c in book.citations:
        mine = next((m for m in answer.citations if m.chunk_id == c.chunk_id), None)
        if mine is None:
            mine = dataclasses.replace(c, n=len(answer.citations) + 1)
            answer.citations.append(mine)
        elif c.quote not in mine.quote:
            widen_citation(mine, c)
        numbers[c.n] = mine.n
    flat = " ".join(answer.text.split())
    paragraphs = []
    for k, part in enumerate(re.split(r"(```.*?```)", book.text, flags=re.DOTALL)):
        if k % 2 and " ".join(part.strip("`").split()) in flat:
            continue           # code the model copied exactly is not shown twice
        paragraphs.append(part if k % 2 else _BOOK_MARK.sub(lambda m: f"[{numbers.get(int(m[1]), m[1])}]", part))
    text = re.sub(r"\n{3,}", "\n\n", "".join(paragraphs))
    kept = []
    for p in text.split("\n\n"):
        if p.startswith("> ") and _already_said(CITATION_MARK.sub("", p[2:]), said):
            continue
        # the opening said the book's first sentence (a label such as "**tuple**:" is not a sentence)
        lead = re.match(r"\*\*([^*]{20,}?)\*\*(?![:：])\s*", p)
        if lead and _already_said(lead.group(1), said):
            p = p[lead.end():]
            if not has_words(CITATION_MARK.sub("", p)):
                continue
        kept.append(p)
    if not any(p.strip() for p in kept):
        return ""
    added = "\n\n" + (BOOK_HEADING_ZH if zh else BOOK_HEADING) + "\n\n" + "\n\n".join(kept)
    answer.text += added
    return added


def _copies_code(text: str, ev: Evidence, worked_chars: int) -> bool:
    """Whether every code block of the example `ev` begins is in `text` as the book writes it (spacing aside)."""
    blocks = re.findall(r"```\n(.*?)\n```", worked_example(ev, worked_chars, "").markdown, re.DOTALL)
    flat = " ".join(text.split())
    return bool(blocks) and all(" ".join(b.split()) in flat for b in blocks)


def stream_composed_answer(question: str, sources: list[Source], llm, *, system: str,
                           history: list[dict] | None = None, memory_context: str | None = None,
                           max_tokens: int | None = None, bare_labels: bool = False, instruction: str = "",
                           renumber_citations: bool = True) -> Iterator[str | Answer]:
    """Yield the model's text as it is written, then the Answer, its citations renumbered 1..n in order of
    use (or, with `renumber_citations=False`, kept as the sources number them). LLMError propagates."""
    by_n = {s.n: s for s in sources}
    renumberer = CitationRenumberer(set(by_n), keep_numbers=True)
    pieces: list[str] = []
    messages = build_messages(question, sources, system=system, history=history, memory_context=memory_context,
                              bare_labels=bare_labels, instruction=instruction)
    stream = llm.stream(messages, max_tokens=max_tokens)
    while True:
        try:
            piece = next(stream)
        except StopIteration as end:
            finish = end.value
            break
        out = renumberer.feed(piece)
        if out:
            pieces.append(out)
            yield out
    tail = renumberer.flush()
    if tail:
        pieces.append(tail)
        yield tail
    text = "".join(pieces).strip()
    if finish == "length":          # cut off at max_tokens: its unfinished last sentence says nothing whole
        text = without_unfinished_tail(text)
    if renumber_citations:
        text, order = renumber(text, set(by_n))
        citations = [citation_for(i, by_n[k].hit, quote=by_n[k].text, support=by_n[k].support)
                     for i, k in enumerate(order, start=1)]
    else:
        citations = [citation_for(k, by_n[k].hit, quote=by_n[k].text, support=by_n[k].support)
                     for k in dict.fromkeys(int(m) for m in CITATION_MARK.findall(text)) if k in by_n]
    yield Answer(question=question, text=text, citations=citations, mode="llm", llm=getattr(llm, "model", "llm"))


# where a sentence ends: its stop, then any closing quotes, brackets, emphasis and citation marks
_SENTENCE_DONE = re.compile(r"[.!?。！？](?:[\"'”’)）*`]*(?:\s*\[\d{1,6}\])*)(?=\s|$)")


_LIST_NUMBER = re.compile(r"\s*(?:[-*]\s*)?\d{1,3}\.")     # "2." begins a numbered item; it ends no sentence


def without_unfinished_tail(text: str) -> str:
    """`text` up to its last finished sentence, for an answer the token limit cut off ("… [3] - `" ends a list
    the model did not finish); unchanged when no finished sentence would be left or the cut is inside code."""
    ends = [m.end() for m in _SENTENCE_DONE.finditer(text)
            if not _LIST_NUMBER.fullmatch(text[text.rfind("\n", 0, m.start()) + 1:m.end()])]
    if not ends or text[:ends[-1]].count("```") % 2:
        return text
    kept = text[:ends[-1]].rstrip()
    return kept if has_words(CITATION_MARK.sub("", kept)) else text


_TRIPLE_QUOTES = re.compile(r'"""|\'\'\'')
ECHO_MIN_CHARS = 8


def without_echo(text: str, instruction: str, question: str = "") -> str:
    """The model's text without what it copied from its instruction ("In two or three plain sentences:" written
    back as the answer's first line), from the question (a small model may write the question back, whole or in
    parts, before or instead of answering it) or from the markup of a source (a docstring's three quotes),
    outside code."""
    clauses = [c.strip() for c in re.split(r"[:.：。;；]", instruction) if len(c.strip()) >= ECHO_MIN_CHARS]
    parts, pos = [], 0
    for block in list(_FENCE_BLOCK.finditer(text)) + [None]:
        prose = text[pos:block.start() if block else len(text)]
        for clause in clauses:
            prose = re.sub(re.escape(clause) + r"\s*[:：.。]?", "", prose, flags=re.IGNORECASE)
        if question:
            prose = _without_asked_sentences(prose, question)
        parts.append(_TRIPLE_QUOTES.sub("", prose))
        if block:
            parts.append(block.group())
            pos = block.end()
    return re.sub(r"\n{3,}", "\n\n", "".join(parts)).strip()


QUESTION_ECHO_SIMILARITY = 0.6
# a sentence that asks, or the unfinished fragment a cut-off answer ends with
_ASKED_SENTENCE = re.compile(r"[^\n?？。！!.]*(?:[?？](?:\s*\[\d{1,6}\])*|(?P<cut>\s*$))")


def _folded(text: str) -> str:
    return re.sub(r"[\W_]+", "", CITATION_MARK.sub("", text)).casefold()


def _without_asked_sentences(prose: str, question: str) -> str:
    """`prose` without its questions (a sentence ending in "?" or "？") that say mostly what the person asked:
    an answer states; a question written back is an echo, not a claim to check or show."""
    asked = _folded(question)
    if not asked:
        return prose

    def echo(match: re.Match) -> str:
        said = _folded(match.group())
        if not said:
            return match.group()
        # a fragment with no question mark is an echo only when all of it is the question's
        needed = len(said) if match.group("cut") is not None else QUESTION_ECHO_SIMILARITY * len(said)
        shared = difflib.SequenceMatcher(None, said, asked).find_longest_match(0, len(said), 0, len(asked)).size
        return "" if shared >= needed else match.group()

    cleaned = _ASKED_SENTENCE.sub(echo, prose)
    if cleaned == prose:
        return prose
    # the echo's own citation marks, left at the start of a line
    cleaned = re.sub(r"(?m)^[ \t]*(?:\[\d{1,6}\][ \t]*)+", "", cleaned)
    return re.sub(r"[ \t]{2,}", " ", cleaned).strip()


def attribute_uncited(answer: Answer, sources: list[Source], embedder) -> None:
    """A small model sometimes writes no [n] at all: cite each sentence with the source that backs it
    best (numbered in order of first use); a sentence no source backs is left uncited and marked ⚠."""
    if CITATION_MARK.search(answer.text) or not sources:
        return
    by_n = {s.n: s for s in sources}
    parts = []
    for sentence in answer_sentences(answer.text):
        best_n, best = max(((s.n, support_check(sentence, s.text, embedder)) for s in sources),
                           key=lambda x: (x[1].supported, x[1].score))
        parts.append(f"{sentence} [{best_n}]" if best.supported else f"{sentence} ⚠")
    text, order = renumber(" ".join(parts), set(by_n))
    answer.text = text
    answer.citations = [citation_for(i, by_n[k].hit, quote=by_n[k].text, support=by_n[k].support)
                        for i, k in enumerate(order, start=1)]


def says_not_found(text: str) -> bool:
    """The model's own 'the sources do not say'."""
    return bool(re.search(prompts.NOT_FOUND_PATTERN, text, re.IGNORECASE))


_FENCE_BLOCK = re.compile(r"```.*?(?:```|$)", re.DOTALL)


def _is_label(text: str) -> bool:
    """A line that only introduces what follows ("When to use a tuple:"): checked, but cited by what follows."""
    return text.rstrip().endswith((":", "："))


_MARKS_ONLY = re.compile(r"\s*(?:\[\d{1,6}\]\s*)+")
_OPENING_MARK = re.compile(r"(\s*)\[(\d{1,6})\][ \t]+(?=\S)")


def _without_bare_marks(prose: str) -> str:
    """Prose without a paragraph of citation marks only ("[3]", left when its sentences were dropped) and without the
    source label a small model opens a paragraph or a line with ("[1] Tuples are … [1]", copying how the passages were
    shown to it) when the line cites that source again; a label that is the line's only mark of that source goes
    after the line's first sentence, where a citation stands."""
    out = []
    for paragraph in re.split(r"(\n[ \t]*\n)", prose):
        if paragraph.strip() and _MARKS_ONLY.fullmatch(paragraph):
            continue
        out.append("\n".join(_without_opening_label(line) for line in paragraph.split("\n")))
    return "".join(out)


def _without_opening_label(line: str) -> str:
    opening = _OPENING_MARK.match(line)
    if not opening:
        return line
    mark, rest = f"[{opening.group(2)}]", line[opening.end():]
    if mark in rest:
        return opening.group(1) + rest
    first = next(iter(answer_sentences(rest)), "")
    if not first or CITATION_MARK.search(first):
        return line
    at = rest.find(first) + len(first)                      # its only citation: after the sentence it cites
    return f"{opening.group(1)}{rest[:at]} {mark}{rest[at:]}"


# A model's code block is shown only when it is the book's: this share of its lines (those with three letters or
# digits) stand in the passages it was given. The 0.5B model wrote a table-spanning API ReportLab does not have
# ("span = Span(column=cell.column_index, …)", unseen u3e-022) and R code the passage never showed (ue-007).
CODE_COPIED_SHARE = 0.8
_CODE_WORD_CHARS = 3


def copied_code(block: str, passages: str) -> bool:
    """Whether a fenced block's code stands in `passages` (all of them in one string, each run of white space one
    space: `flat_text`): code cannot be checked as a sentence, so code the model wrote itself is not shown as the
    book's."""
    lines = block.strip().split("\n")
    body = [" ".join(line.split()) for line in lines[1:] if line.strip() != "```"]
    meaningful = [line for line in body if len(re.sub(r"\W", "", line)) >= _CODE_WORD_CHARS]
    if not meaningful:
        return False
    return sum(line in passages for line in meaningful) >= CODE_COPIED_SHARE * len(meaningful)


def flat_text(texts) -> str:
    """The texts as one string, each run of white space one space (what `copied_code` reads)."""
    return " ".join(" ".join(text.split()) for text in texts)


def _without_closing_label(prose: str) -> str:
    """Prose without its last sentence when that only introduces what followed ("例如：", "Here is the code:"): the
    code it introduced was left out."""
    said = answer_sentences(prose)
    if not said or not _is_label(" ".join(CITATION_MARK.sub("", said[-1]).split())):
        return prose
    at = prose.rfind(said[-1].strip())
    return prose[:at].rstrip() + "\n\n" if at >= 0 else prose


_MARK_WITH_SPACE = re.compile(r"[ \t]*\[\d{1,6}\]")


def _other_backing(claim: str, passages: dict[int, str], cited: list[int], embedder, judge):
    """(n, verdict) of the passage the sentence did not cite that backs it, if one does: a small model numbers its
    sources wrongly ("过拟合是指…欠拟合是因为…" cited [1], the ridge-regression passage, where [2] says it nearly word for
    word). The others are read by words and meaning first; only the closest is asked of the judge (a model call)."""
    others = [(n, support_check(claim, text, embedder)) for n, text in passages.items() if n not in cited]
    if not others:
        return None
    n, verdict = max(others, key=lambda t: (t[1].supported, t[1].score))
    if judge is not None and (verdict.supported or verdict.reason == "unbacked"):
        verdict = support_check(claim, passages[n], embedder, judge)
    return (n, verdict) if verdict.supported else None


def drop_unsupported(answer: Answer, embedder, judge=None, given: list[str] | None = None) -> list[SentenceCheck]:
    """Check every sentence of a composed answer against the passage(s) it cites (rag.support) and leave out
    each one they do not back, each uncited one marked ⚠ (attribute_uncited found no source for it) and each
    one said before; a sentence another of the passages backs is cited by that one instead (`_other_backing`); the
    citations left are renumbered in order of use. Code the model copied from the passages it was `given` (default:
    those it cites) stays as it is; code it wrote itself is left out (`copied_code`)."""
    passages = {c.n: c.quote for c in answer.citations}
    code_sources = flat_text(given if given is not None else passages.values())     # once, read for each block
    checks: list[SentenceCheck] = []
    seen: set[str] = set()
    parts, pos = [], 0
    for block in list(_FENCE_BLOCK.finditer(answer.text)) + [None]:
        prose = answer.text[pos:block.start() if block else len(answer.text)]
        for sentence in answer_sentences(prose):
            cited = [int(m) for m in CITATION_MARK.findall(sentence) if int(m) in passages]
            claim = " ".join(CITATION_MARK.sub("", sentence).replace("⚠", "").split())
            if cited:
                best = max((support_check(claim, passages[n], embedder, judge) for n in cited),
                           key=lambda v: (v.supported, v.score))
                backing = None if best.supported else _other_backing(claim, passages, cited, embedder, judge)
                if backing is not None:     # the right sentence with the wrong number: cited by the passage saying it
                    recited = f"{_MARK_WITH_SPACE.sub('', sentence).strip()} [{backing[0]}]"
                    prose = prose.replace(sentence, recited, 1)
                    sentence, cited, best = recited, [backing[0]], backing[1]
                checks.append(SentenceCheck(claim, cited, best.supported, best.score))
                keep = best.supported
            elif "⚠" in sentence or not claim:
                keep = bool(claim) and "⚠" not in sentence
                if claim:
                    checks.append(SentenceCheck(claim, [], False, 0.0))
            else:       # a sentence the model left uncited is shown only if one of the passages backs it
                best_n, best = max(((n, support_check(claim, text, embedder, judge)) for n, text in passages.items()),
                                   key=lambda t: (t[1].supported, t[1].score), default=(None, None))
                keep = best is not None and best.supported
                checks.append(SentenceCheck(claim, [best_n] if keep else [], keep, best.score if best else 0.0))
                if keep and not _is_label(claim):
                    prose = prose.replace(sentence, f"{sentence.rstrip()} [{best_n}]", 1)
                    sentence = f"{sentence.rstrip()} [{best_n}]"
            if not keep or claim.lower() in seen or _repeats(claim, seen):     # a sentence said twice is said once
                prose = prose.replace(sentence, "", 1)
            elif claim:
                seen.add(claim.lower())
        parts.append(_without_bare_marks(prose))
        if block:
            if copied_code(block.group(), code_sources):
                parts.append(block.group())
            else:
                checks.append(SentenceCheck(block.group(), [], False, 0.0))
                parts[-1] = _without_closing_label(parts[-1])
            pos = block.end()
    text = re.sub(r"[ \t]+\n", "\n", re.sub(r"\n{3,}", "\n\n", "".join(parts))).strip()
    text = re.sub(r"  +", " ", text)
    by_n = {c.n: c for c in answer.citations}
    text, order = renumber(text, set(by_n))
    answer.text = text
    answer.citations = [dataclasses.replace(by_n[k], n=i) for i, k in enumerate(order, start=1)]
    return checks
