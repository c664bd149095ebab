"""Answer metrics of `python -m rag.eval DIR --answers` (definitions in the shared EVAL.md), as pure functions.

Text comparison (`contains`):
- both texts are folded: Unicode NFKC (full-width forms become ASCII), case-folded, typographic dashes,
  minus signs and quotes made plain, currency symbols ($ € £ ¥ ₹) dropped and ALL whitespace removed
  (so "15 %" equals "15%", and a Chinese span matches across a line break);
- numbers are compared as numbers: every number ("3,000", "7,301.50", "0.83") becomes one token holding
  its value, so "3,000" equals "3000", "7,301.5" equals "$7301.5", but "7,301" is NOT found inside
  "7,301.5" (a number matches a whole number only). Signs and scale words are not interpreted:
  "-5" holds the number 5, and "1.2 billion" does not equal "1,200 million".

Per question (`evidence_hit`): the answer text contains the evidence when
- it contains (as above) the `text` of at least one gold item; or, when no gold item has a `text`:
- the gold `answer` has numbers: the answer text holds every one of them (as numbers, anywhere);
  long free-text answers (FinanceBench's are sentences) are never repeated word for word, their
  figures are what must be right;
- the gold `answer` has no number: the answer text contains the whole folded `answer`.

`cited_hit`: a citation is on a gold item when it comes from the gold document and either its page
range holds the gold `page`, or its quote contains the gold `text` — EVAL.md's retrieval hit rule
applied to the citations the person sees.

Learner questions (`points_stated`): a question may carry `points`, the key points a good answer states,
each a list of alternative strings; a point is stated when the answer text contains (as above) any one of
its alternatives. `summarize` then adds `point_recall` (the mean share of points stated, over answerable
questions with points), `full_answers` (the share of those stating all of them), and both — with the
questions' count and refusals — per `type` and per `lang`.
"""
from __future__ import annotations

import re
import statistics
import unicodedata
from collections import Counter
from collections.abc import Iterable
from decimal import Decimal, InvalidOperation

# A number: 1-3 digits then comma-grouped thousands, or plain digits; an optional decimal part.
# Not preceded by a digit (so it always starts at a number's first digit) and never followed by one.
NUMBER = re.compile(r"(?<![\d])(?:\d{1,3}(?:,\d{3})+(?!\d)|\d+)(?:\.\d+)?")
_PUNCT = str.maketrans({
    "\u2212": "-", "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "-", "\u2015": "-",
    "\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u00a0": " ",
    "$": None, "€": None, "£": None, "¥": None, "₹": None,
})
_SPACE = re.compile(r"\s+")
_NUM_OPEN, _NUM_CLOSE = "\x01", "\x02"   # wrap a number's value so only whole numbers match


def number_value(token: str) -> str:
    """A number token's value in one spelling: '7,301.50' -> '7301.5', '3,000' -> '3000', '007' -> '7'."""
    try:
        value = Decimal(token.replace(",", ""))
    except InvalidOperation:
        return token
    text = format(value.normalize(), "f")
    return text


def numbers(text: str) -> list[str]:
    """The values of the numbers in a text, in order (after NFKC, so full-width digits count)."""
    return [number_value(m.group()) for m in NUMBER.finditer(_prefold(text))]


def _prefold(text: str) -> str:
    return unicodedata.normalize("NFKC", text or "").casefold().translate(_PUNCT)


def fold(text: str) -> str:
    """Case-, width- and whitespace-folded text with each number replaced by its wrapped value."""
    text = NUMBER.sub(lambda m: f"{_NUM_OPEN}{number_value(m.group())}{_NUM_CLOSE}", _prefold(text))
    return _SPACE.sub("", text)


def contains(text: str, span: str) -> bool:
    """`text` contains `span`, folded as the module docstring says. An empty span is never contained."""
    needle = fold(span)
    return bool(needle) and needle in fold(text)


def answerable(question: dict) -> bool:
    return bool(question.get("gold"))


def evidence_hit(answer_text: str, question: dict) -> bool:
    """Does the answer a person reads hold the gold evidence? (rule in the module docstring)"""
    gold = question.get("gold") or []
    spans = [g["text"] for g in gold if isinstance(g, dict) and g.get("text")]
    if spans:
        return any(contains(answer_text, span) for span in spans)
    expected = str(question.get("answer") or "")
    wanted = numbers(expected)
    if wanted:
        have = set(numbers(answer_text))
        return all(n in have for n in wanted)
    return contains(answer_text, expected)


def citation_on_gold(citation, g: dict) -> bool:
    """One citation (rag.types.Citation) on one gold item {"doc", "page"?, "text"?}."""
    if not isinstance(g, dict) or citation.doc_name != g.get("doc"):
        return False
    if g.get("page") is not None and citation.page_start is not None:
        end = citation.page_end if citation.page_end is not None else citation.page_start
        if citation.page_start <= int(g["page"]) <= end:
            return True
    return bool(g.get("text")) and contains(citation.quote or "", g["text"])


def cited_hit(citations: Iterable, question: dict) -> bool:
    gold = question.get("gold") or []
    return any(citation_on_gold(c, g) for c in citations for g in gold)


def points_stated(answer_text: str, question: dict) -> list[bool] | None:
    """For each key point of the question, whether the answer states one of its alternatives; None when the
    question has no points."""
    points = question.get("points")
    if not points:
        return None
    return [any(contains(answer_text, alt) for alt in (p if isinstance(p, list) else [p])) for p in points]


def median(values: list[float]) -> float:
    return float(statistics.median(values)) if values else 0.0


def share(flags: list[bool]) -> float | None:
    """The share of true flags; None (JSON null) when there is no question to count, e.g. the
    answerable shares of a set of unanswerable questions only."""
    return round(sum(1 for f in flags if f) / len(flags), 4) if flags else None


def point_summary(records: list[dict]) -> dict:
    """point_recall and full_answers over the answerable records that carry `points` (a list of bools)."""
    scored = [r["points"] for r in records if r["answerable"] and r.get("points")]
    if not scored:
        return {"point_recall": None, "full_answers": None}
    return {"point_recall": round(statistics.fmean(sum(p) / len(p) for p in scored), 4),
            "full_answers": share([all(p) for p in scored])}


def _grouped(records: list[dict], key: str) -> dict:
    groups: dict[str, list[dict]] = {}
    for r in records:
        if r.get(key):
            groups.setdefault(r[key], []).append(r)
    return {name: {"n": len(group), **point_summary(group),
                   "refused_answerable": share([r["refused"] for r in group if r["answerable"]])}
            for name, group in sorted(groups.items())}


def summarize(records: list[dict]) -> dict:
    """The answer keys of the eval's JSON line from per-question records, each with: answerable (bool),
    evidence (bool), cited (bool), refused (bool), chars (int), seconds (float), first_token_s (float),
    llm (str); and, for learner questions, points (list of bool), type and lang (str)."""
    answerable_records = [r for r in records if r["answerable"]]
    unanswerable_records = [r for r in records if not r["answerable"]]
    models = Counter(r.get("llm") or "none" for r in records)
    learner = {}
    if any(r.get("points") for r in records):
        learner = {**point_summary(records), "by_type": _grouped(records, "type"), "by_lang": _grouped(records, "lang")}
    return {
        "n_answerable": len(answerable_records),
        "n_unanswerable": len(unanswerable_records),
        "evidence_in_answer": share([r["evidence"] for r in answerable_records]),
        "cited_gold": share([r["cited"] for r in answerable_records]),
        "refused_unanswerable": share([r["refused"] for r in unanswerable_records]),
        "refused_answerable": share([r["refused"] for r in answerable_records]),
        "answer_chars_p50": median([r["chars"] for r in records]),
        "answer_s_p50": round(median([r["seconds"] for r in records]), 3),
        "first_token_s_p50": round(median([r["first_token_s"] for r in records]), 3),
        "llm": ",".join(name for name, _ in models.most_common()) or "none",
        **learner,
    }
