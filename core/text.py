"""Language-aware text helpers shared by retrieval and memory: token counting, BM25 tokens, language.

CJK text has no spaces, so word tokens come from jieba; everything else is split on word characters.
"""
from __future__ import annotations

import functools
import logging
import re
import threading
import unicodedata

_CJK = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af"
CJK_CHAR = re.compile(f"[{_CJK}]")
_COUNT_TOKEN = re.compile(f"[{_CJK}]|[^\\s{_CJK}\\W]+|[^\\w\\s]", re.UNICODE)
_LATIN_WORD = re.compile(f"[^\\W_{_CJK}]+", re.UNICODE)
CJK_RUN = re.compile(f"[{_CJK}]+")

STOPWORDS = frozenset("""
a an and are as at be been but by can could did do does for from had has have how i if in into is it
its me my of on or our so such than that the their them then there these they this to was we were what
when where which while who whom why will with would you your about after all also any before being
both each few more most other over same some through under until up very s t just only own
的 了 和 是 在 也 就 都 而 及 与 着 或 一个 没有 我们 你们 他们 这个 那个 什么 哪 吗 呢 吧 啊 之 其 为 以 于
""".split())

_jieba_lock = threading.Lock()
_jieba = None


def _jieba_module():
    """Import and initialise jieba once (it builds its dictionary on first use, ~1 s)."""
    global _jieba
    if _jieba is None:
        with _jieba_lock:
            if _jieba is None:
                import jieba
                jieba.setLogLevel(logging.WARNING)
                jieba.initialize()
                _jieba = jieba
    return _jieba


def has_cjk(text: str) -> bool:
    return CJK_CHAR.search(text) is not None


# Characters of Chinese grammar (particles, question words, measure words, common verbs): a text that has one and
# at most one English function word is Chinese, however many English terms it quotes ("Batch Norm 和 Layer Norm
# 有什么区别？", "dpkg-buildpackage、pbuilder 这几个到底啥关系").
_CHINESE_GRAMMAR = re.compile("[的了吗呢吧啥么什怎哪为和与是有在里把被这那几个不没能会要该用]")
_ENGLISH_GRAMMAR = frozenset(w for w in STOPWORDS if w.isascii())


def detect_language(text: str) -> str:
    """'zh' when a meaningful share of letters are CJK, or Chinese grammar holds English terms; else 'en'. Good
    enough to route pipelines."""
    cjk = len(CJK_CHAR.findall(text))
    if not cjk:
        return "en"
    if cjk * 3 >= len(re.findall(r"[A-Za-z]", text)):
        return "zh"
    if _CHINESE_GRAMMAR.search(text) and \
            sum(w.lower() in _ENGLISH_GRAMMAR for w in _LATIN_WORD.findall(text)) <= 1:
        return "zh"
    return "en"


def other_language_words(text: str) -> list[str]:
    """Words written in the script of the language the text is not in: the English terms a Chinese question
    quotes ("…为什么要求 operational readiness flight？"), the Chinese words an English one does. Numbers and
    one-letter words are not words here."""
    if detect_language(text) == "zh":
        return [w for w in (m.lower() for m in _LATIN_WORD.findall(text))
                if len(w) > 1 and not w.isdigit() and w not in STOPWORDS]
    return [w for run in CJK_RUN.findall(text) for w in _jieba_module().lcut(run) if len(w) > 1]


def written_in(text: str, language: str, source: str = "") -> bool:
    """Whether a translation of `source` is written in `language`: for Chinese, a translation that keeps a term
    in English ("Happy-LLM 中的 hallucination 是什么？") still counts when it adds Chinese words."""
    if language == "zh":
        return len(CJK_CHAR.findall(text)) > len(CJK_CHAR.findall(source))
    return detect_language(text) == language


def with_words_replaced(text: str, words: dict[str, str]) -> str:
    """`text` with each word (whole, any case) replaced by its translation; one not in it is added at the end."""
    for word, translation in words.items():
        pattern = re.compile(rf"(?<![A-Za-z0-9_-]){re.escape(word)}(?![A-Za-z0-9_-])", re.IGNORECASE)
        text = pattern.sub(translation, text) if pattern.search(text) else f"{text} {translation}"
    return text


def count_tokens(text: str) -> int:
    """Tokens as chunking counts them: one per CJK character, word, or punctuation mark."""
    return len(_COUNT_TOKEN.findall(text))


def token_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) character span of every counted token, for cutting text at token boundaries."""
    return [m.span() for m in _COUNT_TOKEN.finditer(text)]


def search_tokens(text: str, *, keep_stopwords: bool = False) -> list[str]:
    """Lower-cased word tokens for BM25 / keyword matching; CJK runs segmented with jieba."""
    tokens: list[str] = []
    pos = 0
    for m in CJK_RUN.finditer(text):
        tokens.extend(w.lower() for w in _LATIN_WORD.findall(text[pos:m.start()]))
        tokens.extend(t for t in _jieba_module().cut_for_search(m.group()) if t.strip())
        pos = m.end()
    tokens.extend(w.lower() for w in _LATIN_WORD.findall(text[pos:]))
    if keep_stopwords:
        return tokens
    return [t for t in tokens if t not in STOPWORDS]


def bm25_tokens(text: str) -> list[str]:
    """search_tokens with each English word cut to its stem ("sheets" -> "sheet", "flows" -> "flow"), so
    BM25 matches a word in any of its forms: "balance sheet" finds CONSOLIDATED BALANCE SHEETS."""
    return [stem(t) for t in search_tokens(text)]


_FISCAL_YEAR = re.compile(r"fy((?:19|20)?)(\d\d)")
_YEAR = re.compile(r"(?:fy)?(?:19|20)\d\d")
_FUSED_PERIOD = re.compile(r"(?:fy)?((?:19|20)\d\d)(q[1-4]|h[12])|(q[1-4]|h[12])((?:19|20)\d\d)")


def period_parts(token: str) -> list[str] | None:
    """A quarter or half of a year written as one token, as the words a question writes it in: "q22023" and
    "2023q2" -> ["2023", "q2"]; None for any other token."""
    match = _FUSED_PERIOD.fullmatch(token)
    if not match:
        return None
    return [match.group(1), match.group(2)] if match.group(1) else [match.group(4), match.group(3)]


def is_period(token: str) -> bool:
    """A year, a fiscal year or a quarter or half of one ("2019", "fy2019", "2023q2", "q22023")."""
    return bool(_YEAR.fullmatch(token)) or period_parts(token) is not None


def with_fiscal_years(tokens: list[str]) -> list[str]:
    """The tokens plus the year of each fiscal-year token ("fy2022" -> "2022", "fy21" -> "2021"): a question
    says FY2022 where a filing's table heads its column 2022. A quarter written as one token ("Q22023") becomes
    its year and quarter: no document writes it that way."""
    years = [(m.group(1) or "20") + m.group(2) for t in tokens if (m := _FISCAL_YEAR.fullmatch(t))]
    out: list[str] = []
    for token in tokens + years:
        for part in period_parts(token) or [token]:
            if part not in out:
                out.append(part)
    return out


@functools.lru_cache(maxsize=200_000)
def stem(token: str) -> str:
    """The Snowball English stem of a lower-case Latin word; any other token (numbers, CJK) unchanged."""
    if not token.isascii() or not token.isalpha():
        return token
    return _english_stemmer().stemWord(token)


@functools.lru_cache(maxsize=1)
def _english_stemmer():
    import snowballstemmer
    return snowballstemmer.stemmer("english")


# -- document names ------------------------------------------------------------------------------------

# Words that say what kind of document (or company) a file is about, not which one: "Which book explains
# recursion?" is a question about recursion, not about pumpkin_book_1.9.9.pdf.
KIND_WORDS = frozenset({"book", "books", "ebook", "pdf", "doc", "docx", "document", "documents", "file", "files",
                        "note", "notes", "paper", "papers", "guide", "manual", "handbook", "tutorial", "chapter",
                        "chapters", "section", "slides", "lecture", "lectures", "draft", "final", "copy", "edition",
                        "version", "md", "txt", "html", "report", "reports", "annual", "quarterly", "earnings",
                        "exhibit", "10k", "10q", "8k",
                        # a company's legal form names no company ("a company like this")
                        "company", "companies", "corporation", "corp", "inc", "incorporated", "co", "ltd", "llc",
                        "plc"})

MAX_NAME_CHARS = 150            # a label for a list and a citation, not a path; file systems stop at 255 bytes
_MAX_EXTENSION_CHARS = 10       # ".pdf", ".markdown": longer "extensions" are part of the name
_DROPPED_CATEGORIES = {"Cc", "Cf", "Cs"}   # control, format (bidi overrides, zero-width space), lone surrogates
_KEPT_FORMAT = {"\u200c", "\u200d"}     # zero-width (non-)joiners: needed by emoji sequences and some scripts


def clean_document_name(name: str | None, fallback: str = "document") -> str:
    """A document's name as it is stored and shown: only a label, never a path. Keeps the last path part,
    drops control and format characters, collapses whitespace and caps the length, keeping the extension.
    When nothing is left, the cleaned `fallback` (the file's own name), then "document"."""
    return _clean_name(name or "") or _clean_name(fallback) or "document"


def _clean_name(name: str) -> str:
    last_part = re.split(r"[\\/]", name)[-1]          # a browser on Windows may send C:\…\file.pdf
    kept = "".join(" " if ch.isspace() else ch for ch in last_part if ch.isspace() or _shown(ch))
    cleaned = " ".join(kept.split())
    if not cleaned.strip("."):                       # "", "." and ".." name nothing
        return ""
    return _cap_length(cleaned)


def _shown(ch: str) -> bool:
    return ch in _KEPT_FORMAT or unicodedata.category(ch) not in _DROPPED_CATEGORIES


def _cap_length(name: str) -> str:
    if len(name) <= MAX_NAME_CHARS:
        return name
    stem, dot, extension = name.rpartition(".")
    if not dot or not stem or len(extension) > _MAX_EXTENSION_CHARS or " " in extension:
        return name[:MAX_NAME_CHARS - 1] + "…"
    return stem[:MAX_NAME_CHARS - len(extension) - 2] + "…." + extension


def one_edit_apart(a: str, b: str) -> bool:
    """Whether b is a with one letter added, dropped, changed, or two neighbours swapped ("recyling" and
    "recycling", "teh" and "the"): the typing slips a reader's question makes."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    i = 0
    while i < min(len(a), len(b)) and a[i] == b[i]:
        i += 1
    if len(a) == len(b):
        return a[i + 1:] == b[i + 1:] or (a[i + 2:] == b[i + 2:] and a[i:i + 2] == b[i:i + 2][::-1])
    longer, shorter = (a, b) if len(a) > len(b) else (b, a)
    return longer[i + 1:] == shorter[i:]


# A word English uses less than this (Zipf scale: 1 = once per 100 million words) is no word of its own
SLIP_MAX_ZIPF = 1.5

# A Chinese term this long or longer may be a slip of the input method for one the library writes ("软连接" for
# 软链接, "瘦客服端" for 瘦客户端); a shorter one is one character off too many other words ("模型", "类型")
ZH_SLIP_MIN_CHARS = 3
_ZH_TERM_RUN = re.compile(r"[\u4e00-\u9fff]{3,10}")


def chinese_slip_for(term: str, texts: list[str]) -> str | None:
    """The term the texts write that a Chinese `term` none of them holds is one character off ("软连接" ->
    "软链接"), the most written such; None when the texts hold the term, when it is not all Chinese characters
    (ZH_SLIP_MIN_CHARS or more), or when no written term is that close."""
    if len(term) < ZH_SLIP_MIN_CHARS or not _ZH_TERM_RUN.fullmatch(term) or any(term in t for t in texts):
        return None
    counts: dict[str, int] = {}
    for i in range(len(term)):
        near = re.compile(re.escape(term[:i]) + r"[\u4e00-\u9fff]" + re.escape(term[i + 1:]))
        for text in texts:
            for m in near.finditer(text):
                if _a_term_of_the_text(text, m.start(), m.end(), m.start() + i):
                    counts[m.group()] = counts.get(m.group(), 0) + 1
    return max(counts, key=lambda found: (counts[found], found)) if counts else None


# characters read on each side of a match to tell where the words around it are cut
_WORD_CONTEXT_CHARS = 8


def _a_term_of_the_text(text: str, start: int, end: int, replaced: int) -> bool:
    """Whether text[start:end] is a term the text writes, by jieba's words: it begins and ends where words do, and
    the character at `replaced` (the one a slip changed) shares a word with a neighbour inside it. "软链接" (软 / 链接)
    is one; "网连接" in 因特网连接 or 网络连接, and "的连接" (的 / 连接), are not — eight of the first had outnumbered the
    Debian reference's one 软链接."""
    at = max(0, start - _WORD_CONTEXT_CHARS)
    cuts, holding = {at}, None
    for word in _jieba_module().cut(text[at:end + _WORD_CONTEXT_CHARS]):
        if at <= replaced < at + len(word):
            holding = (at, at + len(word))
        at += len(word)
        cuts.add(at)
    return start in cuts and (end in cuts or end >= len(text)) and holding is not None and \
        any(holding[0] <= n < holding[1] for n in (replaced - 1, replaced + 1) if start <= n < end)


# A glued identifier ("LEFTPADDING", "drawString", "fontname") is no English word, but both its halves are common
# ones: each half at least this common (Zipf 3: once per million words) and this long
COMPOUND_PART_MIN_ZIPF = 3.0
COMPOUND_PART_MIN_CHARS = 3


# A word written both glued and apart ("truetype" / "true type", "filename" / "file name") is rarer than this
GLUED_WORD_MAX_ZIPF = 3.0


@functools.lru_cache(maxsize=65536)
def compound_parts(token: str, max_zipf: float = SLIP_MAX_ZIPF) -> tuple[str, ...]:
    """The two common words an identifier glues together ("leftpadding" -> ("left", "padding"), "setFont" ->
    ("set", "font")), so that a learner's "padding" meets a manual's LEFTPADDING; () for a word of its own (at least
    `max_zipf` common: GLUED_WORD_MAX_ZIPF lets "truetype" be read as "true type") or anything else. The split whose
    rarer half is the most common wins."""
    from wordfreq import zipf_frequency
    word = token.lower()
    if not word.isascii() or not word.isalpha() or len(word) < 2 * COMPOUND_PART_MIN_CHARS + 1 or \
            zipf_frequency(word, "en") >= max_zipf:
        return ()
    best, parts = 0.0, ()
    for i in range(COMPOUND_PART_MIN_CHARS, len(word) - COMPOUND_PART_MIN_CHARS + 1):
        left, right = word[:i], word[i:]
        common = min(zipf_frequency(left, "en"), zipf_frequency(right, "en"))
        if common >= COMPOUND_PART_MIN_ZIPF and common > best:
            best, parts = common, (left, right)
    return parts


def could_be_a_slip(word: str) -> bool:
    """Whether an English word is rare enough to be a typing slip rather than a word of its own (wordfreq):
    "recyling" and "satelites" are, "bullion" (one letter off "billion") is not."""
    from wordfreq import zipf_frequency
    return zipf_frequency(word, "en") < SLIP_MAX_ZIPF
