"""What a chapter, a section, a page range or a whole document says, section by section, in its own words.

A summary follows the scope's own structure (rag.outline): for each section in order, what it establishes —
its central sentences, a definition first — with the page it is on, then the scope's key terms (rag.terms:
its glossary, or the terms its sentences define). Nothing is paraphrased here: every line is the book's
sentence, cited, so a summary is never refused and never says what the book does not. A composed overview
on top (rag.shapes) is checked like every composed answer.

A section's sentences are chosen without a model, in milliseconds: a sentence scores for the words of the
section's heading it holds (a section is about what its heading names), for how central its words are to
the section (shared with many of its sentences), for coming early (a textbook section opens with what it is
about), and for defining something.
"""
from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache

from core.text import CJK_CHAR, STOPWORDS, detect_language, search_tokens, stem
from rag.evidence import FRONT_MATTER, defines, is_exercise, split_units, terms_of
from rag.outline import Outline, OutlineNode, chunks_under, heading_text
from rag.terms import GLOSSARY, key_terms, one_per_term, tidy
from rag.types import CITATION_MARK, Chunk

MAX_SECTIONS = 12            # more sections than this are read at the level above (a chapter's direct sections)
SENTENCES_PER_SECTION = 1    # at least; a scope of few sections gets more each, SUMMARY_SENTENCES in all
SENTENCES_PER_LEAF = 3       # a scope with no sections of its own, and the most a section gets
SUMMARY_SENTENCES = 8        # a chapter of three sections is read two sentences a section, not one
# a chapter's introduction lays out what comes ("Statements are basic units of the model description. In MathProg all
# statements are divided into two categories: declaration statements and functional statements.")
SENTENCES_PER_INTRODUCTION = 2
MAX_SUBSECTIONS = 8          # the subsections named under a section
MAX_KEY_TERMS = 10
_SKIPPED_SECTION = re.compile(r"^(exercises?|problems|习题|练习|思考题|glossary|术语表?|vocabulary|key terms|"
                              r"references|bibliography|参考文献|further reading)\b", re.IGNORECASE)


def skipped_section(title: str) -> bool:
    """A section a summary leaves out (its exercises, glossary, references): what it says is not taught there."""
    return bool(_SKIPPED_SECTION.match(heading_text(title)))


_GLOSSARY_SECTION = re.compile(r"^(glossary|术语表?|vocabulary|key terms)\b", re.IGNORECASE)


@dataclass
class KeySentence:
    text: str
    chunk: Chunk
    start: int                  # offsets of the unit in the chunk's text
    end: int

    @property
    def page(self) -> int | None:
        return self.chunk.pages_of_span(self.start, self.end)[0]


@dataclass
class SectionDigest:
    title: str                  # the heading as the book writes it
    path: tuple[str, ...]
    page_start: int | None
    page_end: int | None
    sentences: list[KeySentence] = field(default_factory=list)
    subsections: list[str] = field(default_factory=list)    # its own sections' names: the topics it goes through
    topics: list[str] = field(default_factory=list)         # words it uses far more than its sibling sections
    entries: list[str] = field(default_factory=list)        # the names a reference section has an entry for

    @property
    def name(self) -> str:
        """The heading without its number ("10.2. Lists are mutable" -> "Lists are mutable")."""
        return heading_text(self.title)


@dataclass
class Digest:
    """A scope's summary from its own sentences."""
    title: str
    page_start: int | None
    page_end: int | None
    sections: list[SectionDigest]
    terms: list[tuple[str, KeySentence]]      # key terms and the sentence that defines each
    topics: list[str] = field(default_factory=list)     # words the scope uses far more than the rest of its book


# A chapter with no sections of its own over this many pages is read by its pages, a few at a time, in order: a
# six-page tutorial summarized by its first page's sentences says only how it begins
LEAF_PAGES_READ_BY_PAGE = 3
LEAF_PAGE_GROUPS = 4


def digest_node(node: OutlineNode, outline: Outline) -> Digest:
    """The digest of one outline node: its sections in order (or, when it has none, its pages in order), and
    the words it is about."""
    inside = chunks_under(node, outline)
    parts = _parts(node)
    if parts == [node] and node.page_start is not None and node.page_end is not None and \
            node.page_end - node.page_start + 1 >= LEAF_PAGES_READ_BY_PAGE:
        return Digest(node.title, node.page_start, node.page_end, _by_pages(node, inside), _key_terms(inside),
                      _scope_topics(node, outline, inside))
    sections, groups = [], []       # each section's digest and its chunks
    for part in parts:
        if skipped_section(part.title):
            continue
        mine = _chunks_of(part, node, inside)
        groups.append(mine)
        limit = SENTENCES_PER_LEAF if part is node else sentences_per_section(len(parts))
        if part is not node and part.path == node.path:     # the chapter's introduction: its plan of what comes
            limit = max(limit, SENTENCES_PER_INTRODUCTION)
        subsections = [heading_text(c.title) for c in part.children if not skipped_section(c.title)] \
            if part is not node else []
        sections.append(SectionDigest(part.title, part.path, part.page_start, part.page_end,
                                      key_sentences(mine, part.title, limit), subsections[:MAX_SUBSECTIONS]))
    for section, mine, topics in zip(sections, groups, section_topics(groups)):
        if not section.subsections:
            section.entries = listed_entries(mine)[:MAX_ENTRIES]
            section.topics = [t for t in topics if not _said(t, section) and t not in section.entries]
    # a section with no whole sentence to quote (a derivation, all formulas) is still listed by its name and
    # subsections: the chapter's structure is what a summary shows first
    return Digest(node.title, node.page_start, node.page_end, [s for s in sections if s.sentences or s.subsections
                                                                or s.path != node.path],
                  _key_terms(inside), _scope_topics(node, outline, inside))


# A reference section is a run of entries, each a name on a line of its own and then its synopsis, that name and its
# arguments ("bg" / "    bg [jobspec ...]" / "Resume each suspended job …"): the Bash manual's "Job Control Builtins", a
# library's functions. Its one key sentence names none of them ("The return status is zero unless …"); the names
# say what the section holds. At least ENTRIES_MIN entries, at most MAX_ENTRIES shown.
_ENTRY = re.compile(r"^[ \t]*([A-Za-z_\\.]*[A-Za-z]{2}[\w.\-]{0,28})[ \t]*\n[ \t]*\1[ \t]*[\[(\-<\w]", re.MULTILINE)
ENTRIES_MIN = 3
MAX_ENTRIES = 12


def listed_entries(chunks: list[Chunk]) -> list[str]:
    """The names the chunks have an entry for, in order, each once; [] for fewer than ENTRIES_MIN."""
    names: dict[str, None] = {}
    for chunk in chunks:
        for match in _ENTRY.finditer(chunk.text):
            names.setdefault(match.group(1), None)
    return list(names) if len(names) >= ENTRIES_MIN else []


# A chapter's topics against its book's other chapters: the word a whole chapter is about is in every one of its
# sections, so no section names it (PARI's plotting chapter never said "ploth")
MAX_SCOPE_TOPICS = 5


def _scope_topics(node: OutlineNode, outline: Outline, inside: list[Chunk]) -> list[str]:
    """The words `node` uses far more than its peers (the other chapters, or its sibling sections)."""
    chapters = outline.chapters()
    # by path: a node's dataclass equality would compare whole subtrees
    peers = chapters if any(c.path == node.path for c in chapters) else next(
        (n.children for n in outline.nodes() if any(c.path == node.path for c in n.children)), outline.roots)
    others = [chunks_under(peer, outline) for peer in peers if peer.path != node.path]
    if not others:
        return []
    return section_topics([inside, *others], max_topics=MAX_SCOPE_TOPICS)[0]


def _chunks_of(part: OutlineNode, node: OutlineNode, inside: list[Chunk]) -> list[Chunk]:
    """The chunks of one of `node`'s parts (rag.summary._parts): under its heading, or for the introduction
    before the node's first section, those directly under the node's own heading."""
    if part is not node and part.path == node.path:
        return [c for c in inside if tuple(c.heading_path) == part.path]
    return [c for c in inside if tuple(c.heading_path[:part.level]) == part.path]


def _by_pages(node: OutlineNode, inside: list[Chunk]) -> list[SectionDigest]:
    """A section-less node's pages in LEAF_PAGE_GROUPS runs, each with its key sentences (named by its pages only:
    SectionDigest.title "")."""
    candidates = _candidates(inside)
    pages = sorted({s.page for s in candidates if s.page is not None})
    n = min(LEAF_PAGE_GROUPS, len(pages))
    runs = [pages[len(pages) * k // n: len(pages) * (k + 1) // n] for k in range(n)]
    # each run's topics against the other runs: a manual's section names its commands as it goes (PARI's plotting
    # section: ploth, then plotinit and the rectangles, then plotexport), which one sentence a run leaves out
    topics = section_topics([[c for c in inside if c.page_start is not None and run[0] <= c.page_start <= run[-1]]
                             for run in runs])
    out = []
    for run, run_topics in zip(runs, topics):
        sentences = _best_sentences([c for c in candidates if c.page in run], node.title, sentences_per_section(n))
        if sentences:
            section = SectionDigest("", node.path, run[0], run[-1], sentences)
            section.topics = [t for t in run_topics if not _said(t, section)]
            out.append(section)
    return out


# A section's topics: the words it uses at least TOPIC_MIN_COUNT times and its sibling sections seldom. One
# sentence a section missed what it goes on to teach (the fill section's 渐变, the draw section's 箭头).
MAX_TOPICS = 4
TOPIC_MIN_COUNT = 3
# wordfreq: "支持" (5.65), "空间", "following" are everyone's words; "渐变" (3.17), "canvas" (3.96) a topic's. English
# at 4.3 also dropped "initial" and "function" but lost "join" (4.6) from Think Python's strings-and-lists section
# (learner_en le-022 4 -> 3 of 4 points): a textbook's terms are often everyday words
TOPIC_MAX_ZIPF = 5.0
_TOPIC_WORD = re.compile(r"[A-Za-z][A-Za-z_]{3,}|[\u4e00-\u9fff]{2,}")
# a Latin-script term in a Chinese book: three characters or more, hyphens and digits inside ("dpkg-buildpackage",
# "LLaMA2", "SFT"), at least two letters; not a piece of a file or version name ("gentoo_0.9.12")
_LATIN_TERM = re.compile(r"(?<![\w\-.])[A-Za-z][A-Za-z0-9_]*(?:-[A-Za-z0-9_]+)*(?![\w\-]|\.\w)")


def section_topics(groups: list[list[Chunk]], max_topics: int = MAX_TOPICS) -> list[list[str]]:
    """For each group of chunks (one section each), the words that set it apart from the others, best first, as
    the book writes them: term frequency in the section times the inverse of the sections holding the word. A
    Chinese book's topics are also its Latin-script terms (Build-Depends, hyperref, RLHF: what a Chinese manual
    teaches is often named in English), an English book's only its English words. Empty lists when there are
    fewer than two sections."""
    if len(groups) < 2:
        return [[] for _ in groups]
    from wordfreq import zipf_frequency
    texts = [_prose_of(chunks) for chunks in groups]
    zh = detect_language(" ".join(t for units in texts for t in units[:20])) == "zh"
    counts: list[Counter] = []
    spelled: dict[str, Counter] = {}
    for units in texts:
        count: Counter = Counter()
        for text in units:
            for word in _topic_words(text, zh):
                latin = not CJK_CHAR.match(word)
                key = (word.lower() if zh else stem(word.lower())) if latin else word   # "arrowheads" is "arrowhead"
                count[key] += 1
                spelled.setdefault(key, Counter())[word] += 1
        counts.append(count)
    holding = Counter(key for count in counts for key in count)
    out = []
    for count, units in zip(counts, texts):
        scored = [(n * math.log((1 + len(groups)) / (1 + holding[key])), key) for key, n in count.items()
                  if n >= TOPIC_MIN_COUNT and holding[key] < len(groups) and
                  zipf_frequency(spelled[key].most_common(1)[0][0], "zh" if CJK_CHAR.match(key) else "en")
                  <= TOPIC_MAX_ZIPF]
        best = []
        for score, key in sorted(scored, key=lambda t: (-t[0], t[1])):
            if len(best) >= max_topics or score <= 0:
                break
            word = spelled[key].most_common(1)[0][0]
            if zh or _names_a_thing(word, units):
                _add_topic(best, word)
        out.append(best)
    return out


def _add_topic(topics: list[str], word: str) -> None:
    """A Chinese word inside one already listed is not listed again ("快捷" after "快捷方式"), and one holding a listed
    word takes its place ("注册表" for "注册"): a chapter's topics read "快捷方式、管理员、注册表". Latin words are
    distinct however they overlap (plot, plotinit)."""
    if CJK_CHAR.match(word):
        if any(word in t for t in topics if CJK_CHAR.match(t)):
            return
        inside = next((k for k, t in enumerate(topics) if CJK_CHAR.match(t) and t in word), None)
        if inside is not None:
            topics[inside] = word
            return
    topics.append(word)


TOPIC_TAGGED_USES = 3     # sentences of the section tagged to tell how it uses a word


def _names_a_thing(word: str, units: list[str]) -> bool:
    """Whether an English section uses the word mostly as a noun ("domain", "slice", "indexing"), not as a verb or
    adjective ("specified", "reserved": a chapter is not "mostly about" them), by the tagger on a few of its
    sentences that hold it."""
    from core.nlp import english_tags
    pattern = re.compile(rf"(?<![\w-]){re.escape(word)}(?![\w-])", re.IGNORECASE)
    uses = [u for u in units if pattern.search(u)][:TOPIC_TAGGED_USES]
    tags = [tag for u in uses for token, tag in english_tags(u[:400]) if token == word.lower()]
    return not tags or 2 * sum(tag.startswith("NN") for tag in tags) >= len(tags)


def _prose_of(chunks: list[Chunk]) -> list[str]:
    """The prose and table units of these chunks, each once (neighbouring chunks overlap)."""
    seen: dict[str, None] = {}
    for chunk in chunks:
        for text in _chunk_prose(chunk.text, chunk.context_prefix):
            seen.setdefault(text, None)
    return list(seen)


# A chapter's topics read every other chapter of its book: each chunk's units and each unit's words are kept, so the
# next summary of the same book reads them at once
@lru_cache(maxsize=20_000)
def _chunk_prose(text: str, context_prefix: str) -> tuple[str, ...]:
    return tuple(unit.text for unit in split_units(text, context_prefix) if unit.kind != "code")


_CODE_LITERALS = frozenset("None True False NULL null true false".split())


@lru_cache(maxsize=100_000)
def _topic_words(text: str, zh: bool) -> tuple[str, ...]:
    """The words of a sentence a topic can be: in a Chinese book its Chinese words of two characters or more
    (jieba) and its Latin-script terms of three characters or more, in an English one its words of four letters
    or more; never stopwords."""
    out = []
    if zh:
        out.extend(m.group() for m in _LATIN_TERM.finditer(text) if len(m.group()) >= 3 and
                   sum(ch.isalpha() for ch in m.group()) >= 2 and m.group().lower() not in STOPWORDS and
                   m.group() not in _CODE_LITERALS)
    for match in _TOPIC_WORD.finditer(text):
        word = match.group()
        if bool(CJK_CHAR.match(word)) != zh:
            continue
        if zh:
            out.extend(w for w in search_tokens(word) if len(w) >= 2 and CJK_CHAR.match(w) and w not in STOPWORDS)
        elif word.lower() not in STOPWORDS and word not in _CODE_LITERALS:
            out.append(word)
    return tuple(out)


def _said(topic: str, section: SectionDigest) -> bool:
    """Whether the section's heading or shown sentences already name the topic."""
    return topic.lower() in " ".join([section.title, *(s.text for s in section.sentences)]).lower()


def digest_chapters(title: str, outline: Outline) -> Digest:
    """A whole document as its chapters, one sentence each."""
    sections = []
    chapters = outline.chapters()
    for chapter in chapters:
        mine = chunks_under(chapter, outline)
        sections.append(SectionDigest(chapter.title, chapter.path, chapter.page_start, chapter.page_end,
                                      key_sentences(mine, chapter.title, 1)))
    pages = [c.page_start for c in chapters if c.page_start is not None]
    return Digest(title, min(pages, default=None), max((c.page_end for c in chapters if c.page_end), default=None),
                  [s for s in sections if s.sentences], [])


def digest_chunks(title: str, chunks: list[Chunk]) -> Digest:
    """A page range (or any run of chunks) as the sections it touches, in order."""
    groups: dict[tuple[str, ...], list[Chunk]] = {}
    for chunk in sorted(chunks, key=lambda c: c.ordinal):
        groups.setdefault(tuple(chunk.heading_path), []).append(chunk)
    sections = []
    for path, mine in groups.items():
        heading = path[-1] if path else title
        if skipped_section(heading):
            continue
        limit = SENTENCES_PER_LEAF if len(groups) == 1 else sentences_per_section(len(groups))
        pages = [c.page_start for c in mine if c.page_start is not None]
        sections.append(SectionDigest(heading, path, min(pages, default=None),
                                      max((c.page_end for c in mine if c.page_end), default=None),
                                      key_sentences(mine, heading, limit)))
    pages = [c.page_start for c in chunks if c.page_start is not None]
    return Digest(title, min(pages, default=None), max((c.page_end for c in chunks if c.page_end), default=None),
                  [s for s in sections if s.sentences], _key_terms(chunks))


def sentences_per_section(sections: int) -> int:
    """How many of its sentences each of a scope's `sections` is summarized by: a chapter of three sections says
    more about each than one sentence (its opening line) — later topics of a section were missed."""
    return max(SENTENCES_PER_SECTION, min(SENTENCES_PER_LEAF, SUMMARY_SENTENCES // max(1, sections)))


def _parts(node: OutlineNode) -> list[OutlineNode]:
    """The sections a node is summarized by: its children (an introduction before them counts as one), or the
    node itself when it has none or too many to read."""
    if not node.children or len(node.children) > MAX_SECTIONS * 2:
        return [node]
    intro = OutlineNode(node.title, node.path, node.first, node.children[0].first - 1, node.page_start,
                        node.children[0].page_start) if node.children[0].first > node.first else None
    children = node.children[:MAX_SECTIONS * 2]
    return ([intro] if intro else []) + children


def _candidates(chunks: list[Chunk]) -> list[KeySentence]:
    """The whole prose sentences of these chunks, in order, each once (neighbouring chunks overlap)."""
    seen: set[str] = set()
    out = []
    for chunk in sorted(chunks, key=lambda c: c.ordinal):
        if chunk.heading_path and FRONT_MATTER.match(chunk.heading_path[-1].strip("# ")):
            continue
        for unit in split_units(chunk.text, chunk.context_prefix):
            # a list's item ("• Monitors many UPS … from more than 140 manufacturers") is a sentence without its mark
            text = _LIST_MARK.sub("", tidy(unit.text))
            if unit.kind != "sentence" or text in seen or not _readable(text):
                continue
            seen.add(text)
            out.append(KeySentence(text, chunk, unit.start, unit.end))
    # a chunk that starts inside a sentence starts with that sentence's tail, which the chunk before holds whole
    return [k for i, k in enumerate(out) if not (i and k.start == 0 and out[i - 1].text.endswith(k.text)
                                                   and len(k.text) < len(out[i - 1].text))]


_LIST_MARK = re.compile(r"^[•·▪‣◦●○■□*–-]\s+")


def _readable(text: str) -> bool:
    """A sentence a summary can show alone: whole, not a question or an exercise, not a formula's debris."""
    if text.rstrip().endswith(("?", "？")) or is_exercise(text):
        return False
    if detect_language(text) == "zh":
        cjk = len(CJK_CHAR.findall(text))
        return cjk >= 10 and len(text) <= 220 and cjk >= 0.45 * len(text.replace(" ", ""))
    words = text.split()
    letters = sum(ch.isalpha() for ch in text)
    return 6 <= len(words) <= 70 and letters >= 0.6 * len(text.replace(" ", "")) and bool(re.match(r"^[\"“(]?[A-Z]", text))


def key_sentences(chunks: list[Chunk], heading: str, limit: int) -> list[KeySentence]:
    """The `limit` sentences that best say what these chunks (one section) are about, in document order."""
    return _best_sentences(_candidates(chunks), heading, limit)


def _best_sentences(candidates: list[KeySentence], heading: str, limit: int) -> list[KeySentence]:
    """The `limit` best of these sentences (in document order) at saying what their section, under `heading`, is
    about."""
    if not candidates:
        return []
    heading_terms = set(terms_of(heading_text(heading)))
    counts = [Counter(set(terms_of(c.text))) for c in candidates]
    section = Counter()
    for c in counts:
        section.update(c)
    norm = math.sqrt(sum(v * v for v in section.values())) or 1.0
    scored = []
    for i, (candidate, terms) in enumerate(zip(candidates, counts)):
        if not terms:
            continue
        centrality = sum(section[t] for t in terms) / (norm * math.sqrt(len(terms)))
        heading = len(heading_terms & set(terms)) / len(heading_terms) if heading_terms else 0.0
        early = 1.0 / (1 + i)
        definition = 1.0 if defines(candidate.text, heading_terms) else 0.0
        score = 0.4 * heading + 0.3 * min(1.0, 2 * centrality) + 0.2 * early + 0.1 * definition
        scored.append((score * _standalone(candidate.text), i))
    best = sorted(scored, reverse=True)[:limit]
    return [candidates[i] for _, i in sorted(best, key=lambda t: t[1])]


_SYMBOLS = re.compile(r"[=+\-*/^_<>∑∏∫√≤≥⩽⩾≠≈∈∂λµμαβγδεθσωΓΛΣΩ∗ˆ|{}\[\]()\d]")
# A sentence that opens by pointing back ("它给文档内部的交叉引用…", "其次在正文中…", "It is the default.") leans on the
# sentence before it: alone in a summary it names nothing. Words, not patterns: add one when a book's style is missed.
LEANS_BACK_EN = frozenset("it its they their them he she his her however also moreover furthermore otherwise "
                          "secondly thirdly finally then therefore hence instead".split())
LEANS_BACK_ZH = ("它们", "它", "其次", "然后", "此外", "另外", "但是", "但", "而且", "因此", "所以", "于是", "同时",
                 "最后", "这样", "这时", "这些", "该")
LEANS_BACK_FACTOR = 0.7
# ... or forward, to what follows it ("我们可以使用以下方法为奇偶页分别设置页眉、页脚。", "is computed as follows."): the
# method is not in the sentence.
POINTS_FORWARD = ("以下", "如下", "下面的", "the following", "as follows")


def leans_back(text: str) -> bool:
    """Whether the sentence opens with a word that points to the one before it (LEANS_BACK_EN / _ZH)."""
    stripped = text.lstrip("\"“'‘(（ ")
    if CJK_CHAR.match(stripped):
        return stripped.startswith(LEANS_BACK_ZH)
    first = re.match(r"[A-Za-z]+", stripped)
    return bool(first) and first.group().lower() in LEANS_BACK_EN and \
        not stripped[len(first.group()):].startswith(("-", "_", "("))


def _standalone(text: str) -> float:
    """How well a sentence reads alone: one that ends mid-thought, introduces code or a formula that follows
    (":"), points back or forward, or is mostly symbols says little without what is around it."""
    stripped = text.rstrip()
    factor = 1.0
    if stripped.endswith((":", "：")):
        factor *= 0.5
    elif not stripped.endswith((".", "。", "!", "！", "；", ";", ")", "）", "”", '"')):
        factor *= 0.6
    if leans_back(stripped) or any(marker in stripped.lower() for marker in POINTS_FORWARD):
        factor *= LEANS_BACK_FACTOR
    prose = CITATION_MARK.sub("", text)    # the book's own mark ("hyperref 宏包[1]提供…"): prose, not symbols
    symbols = len(_SYMBOLS.findall(prose)) / max(1, len(prose.replace(" ", "")))
    if symbols > 0.12:
        factor *= 0.5
    return factor


def _key_terms(chunks: list[Chunk]) -> list[tuple[str, KeySentence]]:
    """The scope's key terms: its glossary entries when it has a glossary, else the terms it defines."""
    found = key_terms(chunks)
    glossary = [k for k in found if k.priority == GLOSSARY]
    chosen = one_per_term(glossary or [k for k in found if k.priority > 1])[:MAX_KEY_TERMS]
    out = []
    for k in chosen:
        at = k.chunk.text.find(k.term)
        out.append((k.term, KeySentence(k.sentence, k.chunk, max(at, 0), max(at, 0) + len(k.term))))
    return out
