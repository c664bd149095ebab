"""Does a passage back a sentence? The check every composed sentence passes before it is shown as fact.

Counting the passage's words in a sentence is not enough: a wrong sentence over a passage usually keeps
its words and changes one thing ("tuples are mutable", "当标记取值为连续型时，称此类任务为“分类”", "x % 100 yields
the last three digits", "“模型”是指从数据中学得“算法”的具体方法"). So the sentence is read clause by clause, each
clause aligned to the passage sentence (or two) that says most of it, and the clause must agree with
that place of the passage:
- numbers: every number it states is in the passage (Chinese numerals and number words read as digits);
- negation: it negates what the aligned place negates, no more, no less;
- opposites: it does not use one word of an opposite pair (rag.support_lexicon) where the place uses the
  other, nor drop or add an opposite prefix ("mutable" for "immutable", "安全" for "不安全");
- place: its terms are said together in that place — a term the passage says elsewhere only (a swapped
  subject, a wrong entity from the next sentence) does not belong to this claim;
- order: the terms it shares with that place come in the same order (a swapped "A … of B" / "B … of A");
- meaning: the words it shares with the place, and its embedding's closeness to it, are enough — an added
  detail the passage never states lowers both.
Across languages (an English sentence over a Chinese passage) only numbers and meaning can be read.

`evalsets/support_pairs` holds labelled (sentence, passage) pairs; `python -m rag.support_eval` prints the
check's precision and recall on them.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

import numpy as np

from core.text import CJK_CHAR, CJK_RUN, STOPWORDS, detect_language, search_tokens, stem
from rag import support_lexicon as L
from rag.injection import is_instruction
from rag.types import CITATION_MARK

# -- reading a text -------------------------------------------------------------------------------------

_CLAUSE_EN = re.compile(r"\s*(?:;|:(?=\s)|,\s*(?:but|while|whereas|although|though|yet|so|and then)\b|"
                        r"\s(?:but|whereas|while)\s)\s*", re.IGNORECASE)
_CLAUSE_ZH = re.compile(r"[；;]|，(?=但|而|然而|不过|因此|所以|从而|反过来)")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[A-Z0-9])|(?<=[。！？；])")
_CONTRACTIONS = re.compile(r"n['’]t\b", re.IGNORECASE)
_ZH_NUMBER = re.compile(rf"([零二两三四五六七八九十百千万亿][零一二两三四五六七八九十百千万亿]*)(?=[{L.ZH_MEASURE_WORDS}])")
_DIGITS = re.compile(r"\d+(?:[.,]\d+)*")
_GENERIC = frozenset("also just only even still really very quite rather thing things way ways case cases kind "
                     "kinds type types part parts called use used using make makes made get gets given "
                     "instead however therefore thus hence example examples such like almost nearly roughly "
                     "about".split())


def clauses(sentence: str) -> list[str]:
    """A sentence's claims: its clauses, cut where a new claim starts ("; ", ", but", "，而", "；")."""
    pattern = _CLAUSE_ZH if detect_language(sentence) == "zh" else _CLAUSE_EN
    parts = [p.strip(" ,，") for p in pattern.split(sentence)]
    return [p for p in parts if p and (CJK_CHAR.search(p) or len(p.split()) >= 2)] or [sentence]


# A term given with its translation in brackets or quotes ("gradient descent (梯度下降)") is not a half-translation.
_QUOTED_TERM = re.compile(r"\([^)]*\)|（[^）]*）|“[^”]*”|\"[^\"]*\"|「[^」]*」|《[^》]*》|`[^`]*`")
_GLUED_SCRIPTS = re.compile(r"[A-Za-z]" + CJK_CHAR.pattern + "|" + CJK_CHAR.pattern + r"[A-Za-z]")


def half_translated(sentence: str) -> bool:
    """An English sentence with Chinese fragments left bare in it ("The model architecture was basic回归 of LLaMA
    架构, …放弃了 GLM's failure try."): a small model's half-done translation, not something a reader can check
    or trust. A Chinese sentence quoting English terms ("Transformer 的每一个 Encoder 由…") is not one."""
    words = re.findall(r"[A-Za-z]+", sentence.lower())
    if sum(1 for w in words if w in STOPWORDS) < 2:     # not written in English, whatever terms it quotes
        return False
    bare = _QUOTED_TERM.sub(" ", sentence)
    return bool(_GLUED_SCRIPTS.search(bare)) or len(CJK_RUN.findall(bare)) >= 2


def sentences(passage: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(" ".join(passage.split())) if s.strip()] or [passage]


def without_instructions(passage: str) -> str:
    """The passage without the sentences it addresses to the assistant (rag.injection): they back nothing."""
    kept = [s for s in sentences(passage) if not is_instruction(s)]
    return passage if len(kept) == len(sentences(passage)) else " ".join(kept)


def content_terms(text: str) -> list[str]:
    """Stemmed content words in order (Chinese: jieba words), without words that carry no claim."""
    return [stem(t) for t in search_tokens(_CONTRACTIONS.sub(" not", text)) if t not in _GENERIC and len(t) > 1
            or CJK_CHAR.match(t)]


_TENS_AND_UNIT = re.compile(r"\b(%s)[- ](%s)\b" % ("|".join(w for w, v in L.NUMBER_WORDS.items() if v in
                                                             {"20", "30", "40", "50", "60", "70", "80", "90"}),
                                                    "|".join(L.UNIT_WORDS)), re.IGNORECASE)


def numbers_in(text: str) -> set[str]:
    out = {m.group().replace(",", "") for m in _DIGITS.finditer(text)}
    for m in _ZH_NUMBER.finditer(text):
        out.add(_zh_value(m.group(1)))
    for m in _TENS_AND_UNIT.finditer(text):
        out.add(str(int(L.NUMBER_WORDS[m.group(1).lower()]) + L.UNIT_WORDS[m.group(2).lower()]))
    words = re.findall(r"[A-Za-z]+|\d+", _TENS_AND_UNIT.sub(" ", text).lower())
    for word, after in zip(words, words[1:] + [""]):
        if word in L.NUMBER_WORDS and (word == "zero" or after and after not in L.NOT_NOUNS_AFTER_NUMBER):
            out.add(L.NUMBER_WORDS[word])
        elif word in L.MONTHS and after.isdigit():
            out.add(L.MONTHS[word])
    if "零" in text:
        out.add("0")
    return out


def _zh_value(numeral: str) -> str:
    from rag.outline import chinese_number
    value = chinese_number(numeral.replace("两", "二"))
    return str(value) if value is not None else numeral




def negation_flipped(claim: str, place: str) -> list[str]:
    """The negations a near copy adds to its place or drops from it ("were not designed" for "were designed",
    可以 for 无法): where the two differ, one side holds a negation and the other none, and little else (a
    stretch that brings new words with its "not" — "…values that cannot be changed" — says something new,
    which the other checks weigh). Read on the stretch of the place the claim copies (wording_similarity)."""
    import difflib
    a, b = _aligned(claim, place)
    neg_a, neg_b = _negation_tokens(a), _negation_tokens(b)
    if len(_negation_markers(a)) == len(_negation_markers(b)):
        return []                    # as many negations on each side, written differently (没有 / 没)
    flipped = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            continue
        ours = any(i in neg_a for i in range(i1, i2))
        theirs = any(j in neg_b for j in range(j1, j2))
        rest_a = sum(1 for i in range(i1, i2) if i not in neg_a)
        rest_b = sum(1 for j in range(j1, j2) if j not in neg_b)
        if ours != theirs and max(rest_a, rest_b) <= 2:
            flipped.append(f"{' '.join(a[i1:i2]) or '∅'}/{' '.join(b[j1:j2]) or '∅'}")
    return flipped


def negation_count(text: str) -> int:
    """How many negations the text holds (words of either language; "not only", 不同 and the like are none)."""
    return len(_negation_markers(_tokens(text)))


def _negation_tokens(tokens: list[str]) -> set[int]:
    """Indices of the tokens that are (part of) a negation."""
    return {i for marker in _negation_markers(tokens) for i in marker}


def _negation_markers(tokens) -> list[range]:
    """The negations among `tokens` (words, Chinese characters), each as the range of its tokens: an English
    negation word that is not part of a phrase like "no later than", or a Chinese marker that is not part of a
    word like 不同 ("different") or 非常 ("very")."""
    out: list[range] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if not CJK_CHAR.match(token):
            ahead = " ".join(tokens[i:i + 3])
            phrase = next((p for p in L.NOT_NEGATIONS_EN if f"{ahead} ".startswith(f"{p} ")), None)
            if phrase:
                i += len(phrase.split())
                continue
            if token in L.NEGATIONS_EN:
                out.append(range(i, i + 1))
            i += 1
            continue
        ahead = "".join(tokens[i:i + 3])
        compound = next((w for w in L.NOT_NEGATIONS_ZH if ahead.startswith(w)), None)
        if compound:
            i += len(compound)
            continue
        marker = next((m for m in _ZH_MARKERS_LONGEST_FIRST if ahead.startswith(m)), None)
        if marker:
            out.append(range(i, i + len(marker)))
            i += len(marker)
            continue
        i += 1
    return out


_ZH_MARKERS_LONGEST_FIRST = sorted(L.NEGATIONS_ZH, key=len, reverse=True)


def _opposites_of(word: str) -> set[str]:
    return {b for a, b in L.ANTONYMS if a == word} | {a for a, b in L.ANTONYMS if b == word}


# -- the verdict ----------------------------------------------------------------------------------------

@dataclass
class Verdict:
    supported: bool
    score: float                    # 0..1: how much of the claim the passage backs (1 when nothing to check)
    reason: str = ""                # why not: "number", "negation", "opposite", "elsewhere", "order", "unbacked",
    #                                 "unrelated" (no word or meaning of the passage), "mixed"
    details: dict = field(default_factory=dict)


# A clause is backed when 0.5 × (the share of its terms the aligned place holds) + 0.5 × (the embedder's
# closeness to it) reaches this; across languages, closeness alone.
BACKED = 0.55
CROSS_LANGUAGE_BACKED = 0.62


# The judge's probability of NO at or above which a sentence is left out: the lowest threshold at which, on the
# labelled pairs' even half, 0.90 of what the check rejects is unsupported (1.5B model, `python -m rag.support_eval
# --judge auto --sweep`: even half 0.92 / 0.75 at 0.55, 0.88 / 0.79 at 0.5); read on the odd half: 0.93 of what it
# rejects is unsupported and it rejects 0.83 of the unsupported (docs/EVALUATION.md).
JUDGE_REJECTS = 0.55
# A sentence the passage's words and meaning do not back (the "unbacked" verdict) needs at least this yes from the
# judge: the 1.5B judge leans to yes over a passage's topic with a use or benefit added ("This makes programming
# particularly useful for analysing large data sets …" over Think Python's definition of a program, 0.54). On the
# labelled pairs (`python -m rag.support_eval --judge auto`, 368 pairs), chosen on the even half where 0.6 and 0.65
# tie: rejected 159 -> 163 of the 196 unsupported, none of the supported (odd half: 0.848 -> 0.867 recall, precision
# 0.937 -> 0.938); at 0.65 one supported paraphrase (0.636) is lost on the odd half.
UNBACKED_JUDGE_YES = 0.6
# A clause that shares no content word with any place of its passage and whose meaning is no closer than this
# (the embedder's calibrated closeness, 0 = unrelated) is left out without asking the judge: the 1.5B judge said
# yes (0.53) to "Open your terminal." over the Bash manual's passage on redirection order, and the 0.5B model had
# written it as a how-to's first step. No labelled same-language pair, supported or not, is that far from its
# passage (the nearest supported paraphrase, no shared word, is at 0.18).
UNRELATED_CLOSENESS = 0.1


def check(sentence: str, passage: str, embedder=None, judge=None) -> Verdict:
    """Whether `passage` backs `sentence` (its [n] marks are ignored): the checks of numbers, negations,
    opposites, places and swaps first; then, with a `judge` (an LLM offering `yes_probability`, see
    core.llm.get_judge), its judgement; without one, the words and meaning the clause shares with its place."""
    sentence = CITATION_MARK.sub("", sentence).strip()
    if not content_terms(sentence) and not numbers_in(sentence):
        return Verdict(True, 1.0)
    passage = without_instructions(passage)
    if not passage.strip():
        return Verdict(False, 0.0, "instruction")
    if half_translated(sentence):
        return Verdict(False, 0.1, "mixed")
    cross = detect_language(sentence) != detect_language(passage)
    # across languages a number may be written as a word in one and a digit in the other ("both", 两个)
    missing = (numbers_in(sentence) - numbers_in(passage)) if not cross else \
        {m.group().replace(",", "") for m in _DIGITS.finditer(sentence)} - numbers_in(passage)
    if missing:
        return Verdict(False, 0.2, "number", {"numbers": sorted(missing)})
    places = sentences(passage)
    vectors = _embed(embedder, clauses(sentence), places, sentence, passage)
    worst = Verdict(True, 1.0)
    for i, clause in enumerate(clauses(sentence)):
        verdict = _check_clause(clause, i, places, passage, vectors, cross)
        if not verdict.supported and (judge is None or verdict.reason != "unbacked"):
            return verdict           # a rule found the wrong word; "unbacked" is for the judge to weigh
        if verdict.score < worst.score:
            worst = verdict
    if judge is not None:
        return _judged(sentence, passage, judge, worst)
    return worst


def _judged(sentence: str, passage: str, judge, fallback: Verdict) -> Verdict:
    from core.errors import LLMError
    from rag import prompts
    messages = [{"role": "system", "content": prompts.SUPPORT_JUDGE_SYSTEM},
                {"role": "user", "content": prompts.SUPPORT_JUDGE_USER.format(passage=passage, sentence=sentence)}]
    try:
        yes = judge.yes_probability(messages)
    except LLMError:
        yes = None
    if yes is None:                  # no judgement: the words and meaning decide
        return fallback
    supported = yes >= UNBACKED_JUDGE_YES if fallback.reason == "unbacked" else 1.0 - yes < JUDGE_REJECTS
    return Verdict(supported, round(yes, 3), "" if supported else "judge", {**fallback.details, "p_yes": round(yes, 3)})


def _embed(embedder, claim_parts: list[str], places: list[str], sentence: str, passage: str):
    """The clauses' and the passage sentences' vectors (normalised), when an embedder knows both languages."""
    if embedder is None:
        return None
    from rag.evidence import embedder_for
    chosen = embedder_for(embedder, sentence, passage[:400])
    if chosen is None:
        return None
    windows = places + [f"{a} {b}" for a, b in zip(places, places[1:])]
    vectors = chosen.embed(claim_parts + windows, kind="document")
    return chosen, vectors[:len(claim_parts)], vectors[len(claim_parts):], windows


def _check_clause(clause: str, index: int, places: list[str], passage: str, vectors, cross: bool) -> Verdict:
    closeness = None
    windows = places + [f"{a} {b}" for a, b in zip(places, places[1:])]
    if vectors is not None:
        embedder, claims, window_vectors, _ = vectors
        cosines = window_vectors @ claims[index]
        unrelated, close = embedder.calibration
        closeness = [float(np.clip((c - unrelated) / max(close - unrelated, 1e-6), 0, 1)) for c in cosines]
    if cross:
        best = max(closeness) if closeness else 0.0
        return Verdict(best >= CROSS_LANGUAGE_BACKED, round(best, 3), "" if best >= CROSS_LANGUAGE_BACKED else "unbacked")
    terms = content_terms(clause)
    if not terms:
        return Verdict(True, 1.0)
    term_set = set(terms)
    window_terms = [set(content_terms(w)) for w in windows]
    lexical = [len(term_set & w) / len(term_set) for w in window_terms]
    combined = [0.5 * lex + 0.5 * (closeness[k] if closeness else lex) for k, lex in enumerate(lexical)]
    at = int(np.argmax(combined))
    place, place_terms, score = windows[at], window_terms[at], combined[at]
    details = {"place": place[:200], "lexical": round(lexical[at], 3),
               "closeness": round(closeness[at], 3) if closeness else None}
    if closeness and max(lexical) == 0 and max(closeness) <= UNRELATED_CLOSENESS:
        return Verdict(False, round(score, 3), "unrelated", details)
    # What the clause says against its place, read where the clause nearly copies it: a rephrasing that
    # moves, negates or opposes words differently says the same thing in other words.
    copy = wording_similarity(clause, place)
    details["copy"] = round(copy, 3)
    if copy >= NEAR_COPY:
        flipped = negation_flipped(clause, place)
        if flipped:
            return Verdict(False, round(min(score, 0.3), 3), "negation", {**details, "words": flipped})
        opposite = _opposite(terms, place, place_terms, clause)
        if opposite:
            return Verdict(False, round(min(score, 0.3), 3), "opposite", {**details, "words": opposite})
        passage_terms = set(content_terms(passage))
        elsewhere = [t for t in term_set if t in passage_terms and t not in place_terms and not _said_nearby(t, place)]
        if elsewhere:
            return Verdict(False, round(min(score, 0.35), 3), "elsewhere", {**details, "terms": elsewhere})
        substituted = _substituted(clause, place, passage) if copy >= SUBSTITUTION_COPY else []
        if substituted:
            return Verdict(False, round(min(score, 0.35), 3), "substituted", {**details, "words": substituted})
    misplaced = _numbers_misplaced(clause, places)
    if misplaced:
        return Verdict(False, round(min(score, 0.3), 3), "number", {**details, "numbers": misplaced})
    reversed_place = _polarity_reversed(clause, places)
    if reversed_place:
        return Verdict(False, round(min(score, 0.3), 3), "negation", {**details, "negated": reversed_place[:200]})
    if _swapped(clause, place):
        return Verdict(False, round(min(score, 0.35), 3), "order", details)
    supported = score >= BACKED
    return Verdict(supported, round(score, 3), "" if supported else "unbacked", details)


_PHRASE = re.compile(r"[，；]|[,;](?!\s*\d)")     # not the comma of a date or a number ("March 10, 2019")


def _numbers_misplaced(claim: str, places: list[str]) -> list[str]:
    """The claim's numbers that the passage states, but not where it states the claim: in "以及 2012 年 Hinton 和他的学生
    提出了 AlexNet…，紧接着 LeCun、Bengio 和 Hinton 在 2015 年正式提出深度学习的概念", AlexNet's year is 2012, though 2015 is
    in the sentence. Read at the phrase (one or two comma-separated pieces of one sentence) holding most of the
    claim's terms, and only when that phrase states another number and the claim is one phrase; [] otherwise."""
    numbers = numbers_in(claim)
    terms = set(content_terms(claim)) - numbers
    if not numbers or len(terms) < 2 or len([p for p in _PHRASE.split(claim) if p.strip()]) > 1:
        return []           # a claim of several phrases may gather its numbers from several places
    windows = []
    for place in places:
        pieces = [p.strip() for p in _PHRASE.split(place) if p.strip()]
        windows += pieces + [f"{a}，{b}" for a, b in zip(pieces, pieces[1:])]
    shared, _, phrase = max((len(terms & set(content_terms(w))), -len(w), w) for w in windows)
    stated = numbers_in(phrase)
    if shared < 2 or shared / len(terms) < POLARITY_SHARE or not stated - numbers:
        return []           # the phrase states no other number: the claim's may sit in the next phrase (a date)
    return sorted(numbers - stated)


# A claim reworded more freely than a near copy can still say the opposite of its place: "the number of
# variables … does not have to match" over "… have to be the same", "LoRA 在部署时会引入额外的推理延迟" over "不存在推理
# 延迟". When one clause of the passage holds this share of the claim's terms (and at least two), a negation on
# one side only, over words both sides say, reverses the claim.
POLARITY_SHARE = 0.6
# Words that contrast rather than negate, for this comparison
_NOT_POLARITY = frozenset({"instead", "rather"})
# How far a negation reaches, in words (English) or characters (Chinese): what follows it, or, when it ends its
# stretch of text, what precedes it ("… and assignment is not.", "与预训练无关"); a punctuation mark ends it
NEGATION_REACH_EN = 6
NEGATION_REACH_ZH = 4
_SEGMENT = re.compile(r"[，。、,.;；:：！？!?()（）“”\"]")


def _polarity_reversed(claim: str, places: list[str]) -> str:
    """The clause of the passage (its sentences: `places`) that says most of what `claim` says, when a negation
    reaches words the two share on one side and not on the other; "" otherwise. A side without such a negation
    that holds a word with an opposite prefix the other lacks ("immutable" for "cannot be changed") may negate
    by that prefix: then nothing is said."""
    terms = set(content_terms(claim)) - L.NEGATIONS_EN - set(L.NEGATIONS_ZH)
    if len(terms) < 2:
        return ""
    units = [unit for place in places for unit in clauses(place)]
    shared, _, unit = max((len(terms & set(content_terms(u))), -len(u), u) for u in units)
    if shared < 2 or shared / len(terms) < POLARITY_SHARE:
        return ""
    claim_tokens, unit_tokens = _tokens(claim), _tokens(unit)
    claim_negated = bool(_negated_words(claim) & _comparable(unit_tokens))
    if claim_negated == bool(_negated_words(unit) & _comparable(claim_tokens)):
        return ""
    plain, other = (unit_tokens, claim_tokens) if claim_negated else (claim_tokens, unit_tokens)
    if any(t.startswith(L.OPPOSITE_PREFIXES_EN) and len(t) >= 6 and t not in other for t in plain):
        return ""
    return unit


def _negated_words(text: str) -> set[str]:
    """The words (Chinese: characters) a negation in `text` reaches, as _comparable gives them."""
    reached: list[str] = []
    for segment in _SEGMENT.split(text):
        tokens = _tokens(segment)
        for marker in _negation_markers(tokens):
            if tokens[marker.start] in _NOT_POLARITY:
                continue
            reach = NEGATION_REACH_ZH if CJK_CHAR.match(tokens[marker.start]) else NEGATION_REACH_EN
            after = _until_conjunction(tokens[marker.stop:marker.stop + reach])
            reached += after
            if len(tokens) - marker.stop <= 1:
                reached += _until_conjunction(tokens[max(0, marker.start - reach):marker.start][::-1])
    return _comparable(reached) - _comparable([t for m in _negation_markers(reached) for t in reached[m.start:m.stop]])


_CONJUNCTIONS = frozenset("and but or while whereas although though 而 但 或".split())


def _until_conjunction(tokens: list[str]) -> list[str]:
    """`tokens` up to the first conjunction: a negation does not reach across "and", "but", 而."""
    for i, token in enumerate(tokens):
        if token in _CONJUNCTIONS:
            return tokens[:i]
    return tokens


def _comparable(tokens) -> set[str]:
    """Tokens as two texts can share them: English content words stemmed (no digits, no single letters: "a = 7"
    names nothing), Chinese characters that are not function characters; no negation words."""
    return {t if CJK_CHAR.match(t) else stem(t) for t in tokens
            if t not in _FUNCTION_ZH and t not in L.NEGATIONS_EN and t not in L.NEGATIONS_ZH
            and (CJK_CHAR.match(t) or (t not in STOPWORDS and len(t) > 1 and not t.isdigit()))}


def _said_nearby(term: str, place: str) -> bool:
    """A Chinese term cut differently by jieba in the place ("数据集" vs "数据"): its characters are there."""
    return bool(CJK_CHAR.match(term)) and term in place


def _opposite(terms: list[str], place: str, place_terms: set[str], clause: str) -> list[str]:
    """Words of the claim whose opposite stands in its place instead (and not the word itself): a pair of
    rag.support_lexicon.ANTONYMS, or the word with an opposite prefix ("mutable" / "immutable", 安全 / 不安全)."""
    found = []
    zh = detect_language(clause) == "zh"
    if zh:
        for a, b in L.ANTONYMS:
            for word, other in ((a, b), (b, a)):
                if word in clause and other in place and word not in place and other not in clause:
                    found.append(f"{word}/{other}")
        for word in set(terms):
            for prefix in L.OPPOSITE_PREFIXES_ZH:
                if prefix + word in place and prefix + word not in clause and word not in place.replace(prefix + word, ""):
                    found.append(f"{word}/{prefix}{word}")
        return found
    claim_words = set(re.findall(r"[a-z]+", clause.lower()))
    place_words = set(re.findall(r"[a-z]+", place.lower()))
    for word in claim_words - place_words:
        for other in _opposites_of(word):
            if other in place_words and other not in claim_words:
                found.append(f"{word}/{other}")
        for prefix in L.OPPOSITE_PREFIXES_EN:
            if prefix + word in place_words:
                found.append(f"{word}/{prefix}{word}")
            if word.startswith(prefix) and len(word) - len(prefix) >= 4 and word[len(prefix):] in place_words:
                found.append(f"{word}/{word[len(prefix):]}")
    return found


NEAR_COPY = 0.55


def wording_similarity(claim: str, place: str) -> float:
    """How nearly the claim copies the best-matching stretch of its place, word for word (Chinese: character
    for character), 0..1."""
    import difflib
    a, b = _aligned(claim, place)
    if not a or not b:
        return 0.0
    return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()


@functools.lru_cache(maxsize=256)
def _aligned(claim: str, place: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The claim's tokens and those of the stretch of its place it copies best: what the near-copy checks
    (wording_similarity, negation_flipped, _substituted) each compare, found once per clause and place."""
    a, b = _tokens(claim), _tokens(place)
    if not a or not b:
        return tuple(a), tuple(b)
    start = _copied_stretch(a, b)
    return tuple(a), tuple(b[start:start + len(a) + 4])


def _copied_stretch(a: list[str], b: list[str]) -> int:
    """Where in `b` the stretch that `a` copies best starts."""
    import difflib
    span = len(a) + 4
    starts = range(0, max(1, len(b) - len(a) + 1), 2)
    return max(starts, key=lambda i: difflib.SequenceMatcher(None, a, b[i:i + span], autojunk=False).ratio())


# A claim that copies its place nearly word for word and replaces a piece of it with words the passage never
# says changed what it claims ("越难被捕捉" -> "越容易被捕捉", "由 GPT-3 首次引入" -> "由 BERT 首次引入", "上三角" ->
# "下三角"): a faithful rewording either copies or rewrites more broadly.
SUBSTITUTION_COPY = 0.78
# Characters and words a faithful near copy may exchange (是/为, 的/之, "a"/"the"): not a change of claim.
_FUNCTION_ZH = frozenset("的了是为在和与及或也都就而之其即则被把将对于从以等着过个这那该此又叫称")


def _substituted(claim: str, place: str, passage: str) -> list[str]:
    """The pieces of a near copy that replace its place's words with words the passage never uses, as
    "old->new"; function words and characters exchanged for others are not counted."""
    import difflib
    a, b = _aligned(claim, place)
    zh = detect_language(claim) == "zh"
    function = _FUNCTION_ZH if zh else STOPWORDS
    said_zh = "".join(_tokens(passage))
    said_en = {stem(t) for t in _tokens(passage)}
    found = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        new, old = a[i1:i2], b[j1:j2]
        # like for like ("难" / "容易", "GPT-3" / "BERT"); a piece rewritten at another length is rewording
        if op != "replace" or abs(len(new) - len(old)) > 1:
            continue
        content = [t for t in new if t not in function and not t.isdigit()]
        if not content or all(t in function for t in old):
            continue
        unsaid = "".join(new) not in said_zh if zh else any(stem(t) not in said_en for t in content)
        if unsaid:
            found.append(f"{('' if zh else ' ').join(old)}->{('' if zh else ' ').join(new)}")
    return found


def _swapped(claim: str, place: str) -> bool:
    """The claim is its place's wording with two of its pieces exchanged ("“模型”是指从数据中学得“算法”" over
    "“算法”是指从数据中学得“模型”", "written for Python 2 … notes about Python 3"): two replaced stretches, each
    the other's original."""
    import difflib
    a, b = _tokens(claim), _tokens(place)
    replaced = [(tuple(a[i1:i2]), tuple(b[j1:j2])) for op, i1, i2, j1, j2 in
                difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes() if op == "replace"]
    return any(x[0] == y[1] and x[1] == y[0] and x[0] != x[1] for k, x in enumerate(replaced) for y in replaced[k + 1:])


def _tokens(text: str) -> list[str]:
    """Every word (Chinese: every character), for comparing two sentences' wording."""
    return re.findall(r"[\u4e00-\u9fff]|[A-Za-z0-9]+", _CONTRACTIONS.sub(" not", text.lower()))
