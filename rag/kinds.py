"""What kind of answer a question asks for: lookup, explain, compare, summarize, example, why or howto.

Each kind is answered in its own shape (rag.shapes): a summary goes through the chapter's sections in
order, a comparison retrieves both sides, an example keeps the book's code whole. The kind is said by the
question's form ("what is the difference between", "举个例子", "why", "怎么"), in any topic and either
language, so a small classifier learns it from labelled examples (rag.kind_examples): a logistic
regression over words and character n-grams (which read Chinese and English alike, and see "differ" in
"difference" and "differs") of the question and of its skeleton, the question with its nouns masked
(core.nlp.skeleton), so the topic counts less than the form. It trains in a second on first use. A
phrasing it gets wrong is fixed by adding examples, not rules.
"""
from __future__ import annotations

import re
import threading
from dataclasses import dataclass

from rag.kind_examples import KIND_EXAMPLES

KINDS = ("lookup", "explain", "compare", "summarize", "example", "why", "howto")
# Below this probability the question is answered as a lookup: the shape that quotes the best passages,
# which fits every kind a little.
MIN_CONFIDENCE = 0.25

_DIGITS = re.compile(r"\d+(?:\.\d+)*")


# A piece of code, a file or version name ("gentoo-0.9.12-ReleaseCandidate-99", "$(DESTDIR)", "cmr10.pk"): printable
# ASCII of six characters or more, with a letter and a digit or a code symbol (not prose punctuation: "what's")
_CODE_TOKEN = re.compile(r"(?=[!-~]*[0-9_/~$@%{}\[\]<>=#&|\\^*+-])(?=[!-~]*[A-Za-z])[!-~]{6,}")


def _normalise(question: str) -> str:
    """Lower case, numbers as one digit: "chapter 12" and "chapter 4" read alike."""
    return _DIGITS.sub("0", " ".join(question.lower().split()))


def _code_masked(question: str) -> str:
    """Code, file and version names as one placeholder: their many characters are the topic, and would outweigh
    the few that say the form ("为啥 … 要改名成 … 这种？")."""
    return _CODE_TOKEN.sub(" code ", question)


def features_texts(questions: list[str]) -> list[str]:
    """What the classifier reads: each question's skeleton, then the question."""
    from core.nlp import skeletons
    masked = [_code_masked(q) for q in questions]
    return [_normalise(f"{s} | {q}") for s, q in zip(skeletons(masked), masked)]


@dataclass(frozen=True)
class KindDecision:
    kind: str
    confidence: float
    scores: dict[str, float]


class KindClassifier:
    def __init__(self, examples: dict[str, list[str]] | None = None):
        from sklearn.feature_extraction.text import TfidfVectorizer
        from sklearn.linear_model import LogisticRegression
        from sklearn.pipeline import make_union
        examples = examples or KIND_EXAMPLES
        texts = features_texts([t for kind in KINDS for t in examples.get(kind, [])])
        labels = [kind for kind in KINDS for _ in examples.get(kind, [])]
        self.vectorizer = make_union(
            TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 4), sublinear_tf=True),
            TfidfVectorizer(analyzer="word", ngram_range=(1, 2), sublinear_tf=True, token_pattern=r"(?u)\b\w+\b"))
        self.model = LogisticRegression(C=8.0, max_iter=3000, class_weight="balanced")
        self.model.fit(self.vectorizer.fit_transform(texts), labels)

    def classify(self, question: str) -> KindDecision:
        probabilities = self.model.predict_proba(self.vectorizer.transform(features_texts([question])))[0]
        scores = {kind: round(float(p), 4) for kind, p in zip(self.model.classes_, probabilities)}
        kind = max(scores, key=scores.get)
        if scores[kind] < MIN_CONFIDENCE:
            kind = "lookup"
        return KindDecision(kind, scores[max(scores, key=scores.get)], scores)


# An explicit ask for an example anywhere in a question with several asks ("how is the first split chosen?
# show me the example") makes it an example question; otherwise the first ask says the kind.
_DECIDES_ANYWHERE = ("example",)
_SURE = 0.5
_AFTER_QUESTION_MARK = re.compile(r"(?<=[?？])(?=\S)")     # 是什么？为什么… (Chinese puts no space after it)


def _asks(question: str) -> list[str]:
    """The question's asks, cut where a second one begins (rag.parts.PART_BREAKS), however short each is; a
    clause that only names the subject ("这份草案，为什么…") belongs to the ask after it."""
    from rag.parts import PART_BREAKS, joined_subject_clauses
    parts = [question.strip()]
    for pattern in (*PART_BREAKS, _AFTER_QUESTION_MARK):
        parts = [piece.strip(" ,，;；") for part in parts for piece in pattern.split(part)]
    return joined_subject_clauses([p for p in parts if p])


_classifier: KindClassifier | None = None
_lock = threading.Lock()


def classify_kind(question: str) -> KindDecision:
    """The kind of the question (one classifier per process, trained on first use). A question asking two
    things ("X 是什么？为什么要用它？") takes its first ask's kind — two questions in one read like a comparison
    to the classifier — unless a later ask is surely for an example."""
    global _classifier
    with _lock:
        if _classifier is None:
            _classifier = KindClassifier()
    asks = _asks(question)
    if len(asks) < 2:
        return _classifier.classify(question)
    decisions = [_classifier.classify(ask) for ask in asks]
    for decision in decisions[1:]:
        if decision.kind in _DECIDES_ANYWHERE and decision.confidence >= _SURE:
            return decision
    return decisions[0]
