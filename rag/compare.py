"""The things a comparison asks about: "the difference between a list and a tuple" -> (list, tuple); "apt、apt-get
和 aptitude 有什么区别" -> (apt, apt-get, aptitude).

A comparison is answered by retrieving each side on its own (one side's best passage rarely says much about
the other) and setting them side by side (rag.shapes). The patterns below are the ways a learner asks one,
in English and Chinese; each names its sides `a` and `b`, and `a` may list several ("A, B and C", "A、B 和 C").
Tested in tests/test_shapes.py.
"""
from __future__ import annotations

import re

# where a side ends: punctuation, a second ask, or the learner's own situation ("... when i declare a param")
_END = r"(?=\s*(?:[?？。.!！;；:：]|,|，|$|\b(?:and when|and which|and how|and why|in python|in the book|" \
       r"(?:when|if|because|since|so) (?:i|you|we)|for my)\b))"
# a colon inside a side is syntax (":=", "a:b"); one before a space ends it ("Architecture: any")
_SIDE = r"(?P<{}>(?:[^?？。,，;；:：]|:(?=\S))+?)"
_A, _B = _SIDE.format("a"), _SIDE.format("b")
# the first side of "between A, B and C": a list, split at its commas (`_LISTED`)
_A_LIST = r"(?P<a>(?:[^?？。;；:：]|:(?=\S))+?)"
_LISTED = re.compile(r"\s*(?:,|、|，)\s*")
# "union vs diff vs symdiff vs inter vs cross": the second side goes on listing
_MORE_VS = re.compile(r"\s+(?:vs\.?|versus)\s+", re.IGNORECASE)
MAX_SIDES = 5

# Chinese: the words between the sides and 区别 that belong to neither ("A 和 B 到底有啥区别")
# "A、B、C 这几个引擎到底有啥不一样", "quote、quotation、verse 这三个摘录环境": what the sides are belongs to neither
_ZH_ADVERBS = r"(?:\s*(?:这|那)[几两三四五]?(?:个|种|款|类|条|套|样)[\u4e00-\u9fff]{0,6}?)?" \
              r"(?:之间|到底|究竟|又|都|具体|实际上|各自|分别)*"
# their relation only when asked ("…到底啥关系", "…是什么关系"; "…登记成为公民伴侣关系" asks a number)
_ZH_ASK_DIFFERENCE = r"(?:(?:有什么|有啥|有何|有哪些|是什么|是啥|什么|啥|的|在哪|在哪里|在哪儿|哪里|哪儿)?" \
                     r"(?:区别|不同|不一样|差别|差异|异同|优缺点|哪个好|哪个更好|哪个更)|(?:有什么|有啥|有何|是什么|是啥|什么|啥)关系)"
# what the sides are compared in, said after them: "RoBERTa 和 ALBERT 对 NSP 任务的处理有什么不同", "A 跟 B 这几条路线，
# 在插图格式支持上有什么不一样" (a clause ending in 的 + a word, 上 or 方面, so that a side holding 对 or 在 stays whole)
_ZH_COMPARED_IN = r"(?:(?:[，,]\s*)?(?:对|在)(?P<about>[^，。？！：:]{1,24}?)(?:的[\u4e00-\u9fff]{1,4}|上|方面))?"
# how the two seem alike, said before asking: "\newline 和 \linebreak 都能换行，到底区别在哪", "路径和路向老是搞混，区别是啥"
_ZH_SEEM_ALIKE = r"(?:都|也|老是|总是|经常|常常|容易|老|好像|似乎|看起来|看着|感觉|搞混|混淆|分不清|搞不清)[^，。？！]{0,12}?[，,]\s*"

# "difference", also as learners misspell it ("diffrence", "diference", "differnce")
_DIFFERENCE = r"dif+e?re?n(?:ce|ces|t)"

COMPARISON_PATTERNS: list[re.Pattern] = [re.compile(p, re.IGNORECASE) for p in (
    rf"\b{_DIFFERENCE}\s+between\s+{_A_LIST},?\s+and\s+{_B}{_END}",
    rf"\b(?:how|in what way|in which ways?)\s+(?:is|are|does|do)\s+{_A}\s+(?:differ|different|differs)\s+from\s+{_B}{_END}",
    rf"\b(?:how|in what way)\s+(?:is|are|does|do)\s+{_A}\s+(?:compare|compares|contrast|stack up)\s+(?:to|with|against)\s+{_B}{_END}",
    rf"\b(?:compare|comparing|contrast|contrasting)\s+{_A_LIST},?\s+(?:and|with|to|against|vs\.?|versus)\s+{_B}{_END}",
    rf"\bis\s+{_A}\s+(?:the same as|different from|better than|worse than|like)\s+{_B}{_END}",
    rf"\b(?:should I use|should I pick|should I choose|do I use|would I use|which is better,?|which one,?)\s+{_A}\s+or\s+{_B}{_END}",
    rf"^\s*{_A}\s+(?:vs\.?|versus|or)\s+{_B}\s*(?:[?:：]|$|\s*[-–—]|,)",
    rf"\b{_A}\s+(?:vs\.?|versus)\s+{_B}{_END}",
    rf"\b{_A}\s+(?:differs?|differ)\s+from\s+{_B}{_END}",
    rf"\bsimilarities and {_DIFFERENCE}\s+between\s+{_A_LIST},?\s+and\s+{_B}{_END}",
    # the two named, how they seem alike, then the ask: "ties and slurs look the same to me, what's the difference"
    rf"^\s*{_A}\s+and\s+{_B}\s+(?:look|seem|sound|feel|are)\s+(?:the same|alike|similar|identical|so similar)\b[^?？]*?"
    rf"(?:what'?s|what is|whats)\s+(?:the\s+)?(?:actual\s+|real\s+)?{_DIFFERENCE}",
    r"(?:比较|对比|区分)(?:一下)?(?P<a>[^，。？！和与跟同及]+?)(?:和|与|跟|同|及)(?P<b>[^，。？！]+?)(?:的(?:区别|不同|差别|差异|异同))?(?=[，。？！]|$)",
    rf"(?P<a>(?:[^，。？！：:]|:(?=\S))+?)(?:和|与|跟|同|及|相比于|相较于)(?P<b>(?:[^，。？！：:]|:(?=\S))+?){_ZH_ADVERBS}"
    rf"{_ZH_COMPARED_IN}{_ZH_ADVERBS}{_ZH_ASK_DIFFERENCE}",
    # a list with no 和: "胖客户端、瘦客户端、无盘工作站到底有啥区别"
    rf"(?P<a>[^，。？！：:和与跟]+?)、(?P<b>[^，。？！：:、]+?){_ZH_ADVERBS}{_ZH_COMPARED_IN}{_ZH_ADVERBS}{_ZH_ASK_DIFFERENCE}",
    r"(?P<a>[^，。？！：:]+?)(?:和|与|跟)(?P<b>[^，。？！：:]+?)(?:相比|比较起来|比起来|对比|比一比|比比|比较一下)",
    # the two named, then how they seem alike, then the ask: "frame 和 picture 老是搞混，区别到底是啥"
    rf"(?P<a>[^，。？！：:]+?)(?:和|与|跟)(?P<b>[^，。？！：:]+?){_ZH_SEEM_ALIKE}"
    r"(?:它们|两者|二者|这两个)?(?:的)?(?:到底|究竟)?(?:有什么|有啥)?(?:区别|不同|差别|差异)",
    # which of them to use: "apt、apt-get 和 aptitude 到底用哪个", "A 和 B 我该选哪个", "A、B 和 C 这三个画图工具该怎么选"
    rf"(?P<a>[^，。？！：:]+?)(?:和|与|跟|还是)(?P<b>[^，。？！：:]+?){_ZH_ADVERBS}(?:我|我们)?(?:该|应该|要)?"
    r"(?:(?:用|选|挑|选择)哪(?:个|一个|种|一种)(?:好|比较好|更好)?|(?:怎么|如何|咋)(?:选|挑|选择))(?=[？?，,。！!]|$)",
    # what each of them is or does: "PAM 和 NSS 分别是干嘛的" (not a value each has: "分别用哪个端口" is a lookup)
    r"(?P<a>[^，。？！：:]+?)(?:和|与|跟)(?P<b>[^，。？！：:]+?)(?:各自|分别)(?:是)?(?:干嘛|干什么|干啥|做什么|做啥|"
    r"什么意思|啥意思|指什么|指啥|有什么用|有啥用|负责什么|负责啥|什么东西|啥东西|起什么作用)",
    r"(?P<a>[^，。？！：:]+?)(?:和|与|跟)(?P<b>[^，。？！：:]+?)是一回事",
    r"(?P<a>[^，。？！：:]+?)(?:和|与|跟)(?P<b>[^，。？！：:]+?)一样吗",
)]

# What each of several things is, asked together: "what are contexts and engravers?", "what are main, contrib and
# non-free in the Debian archive?". Each is found on its own and shown side by side, as a comparison's sides are,
# but the question asks to explain them (`asks_what_each_is`). Not "what is X and how does it work" (a second ask),
# nor "what are the pros and cons" (ASPECT_WORDS: sides of one thing, not things).
_ASK_WORD = r"(?:how|why|when|what|which|where|who|does|do|is|are|can|could|should|would|will)"
_NOT_AN_ASK = rf"(?!{_ASK_WORD}\b)"
# the first things named, up to a second ask ("what is ZeRO in DeepSpeed and how do ZeRO-1 … differ" names no list)
_EACH_A = rf"(?P<a>(?:(?!\band\s+{_ASK_WORD}\b)[^?？。;；:：])+?)"
EACH_PATTERNS: list[re.Pattern] = [re.compile(p, re.IGNORECASE) for p in (
    rf"\b(?:what|whats|what's)\s+(?:are|is)\s+(?:the\s+)?{_EACH_A},?\s+and\s+(?:the\s+)?{_NOT_AN_ASK}{_B}{_END}",
    rf"\bwhat\s+(?:do|does)\s+(?:the\s+)?{_EACH_A},?\s+and\s+(?:the\s+)?{_B}\s+(?:mean|stand for)\b",
    # "!! 和 !$ 是啥意思" (not "默认的线端和连接样式又是啥": values asked of each are looked up)
    r"(?P<a>[^，。？！：:]+?)(?:和|与|跟)(?P<b>[^，。？！：:]+?)(?:分别|各自)?(?:是)?(?:啥|什么)意思(?=[？?，,。！!]|$)",
)]
ASPECT_WORDS = frozenset("pros cons advantages disadvantages benefits drawbacks strengths weaknesses similarities "
                         "differences upsides downsides limitations features inputs outputs causes effects".split())

# what leads into a side but does not name it: "for notifications should i write my own NOTIFYCMD script or use
# upssched" compares "NOTIFYCMD script" and "upssched"
_LEAD_EN = re.compile(r"^(?:(?:what|what's|whats)\s+(?:is|are)\s+(?:the\s+)?|the\s+|a\s+|an\s+|python'?s?\s+|"
                      r"(?:for\s+[\w\- ]{1,30}?\s+)?(?:should|do|would|could|can)\s+(?:i|we|you)\s+)+", re.IGNORECASE)
# in a question asking which to choose, the verb of choosing leads into a side ("… or use upssched"); elsewhere it may
# be the side's own word ("use case")
_CHOOSING = re.compile(r"\b(?:should|do|would|could|can)\s+(?:i|we|you)\b", re.IGNORECASE)
_LEAD_VERB = re.compile(r"^(?:use|write|pick|choose|go with|try|make|create)\s+(?:(?:my|our|your) own\s+)?",
                        re.IGNORECASE)
# where the sides are compared, not part of the last one: "a scheme and a collection in the tex live installer"
_TAIL_EN = re.compile(r"\s+(?:in python|in (?:the|this|that|my|your|an?) (?:[\w\-.()]+ ){0,3}[\w\-.()]+|in [A-Z][\w\-]+|"
                      r"for (?:a|an|my|your) [\w\-]+|"
                      r"according to .+|exactly|really|actually)$", re.IGNORECASE)
_LEAD_ZH = re.compile(r"^(?:请问|请|帮我|我想知道|想知道|你能|能否|可以|说说|讲讲|书里|书中|在书中|这本书里|那么|那|"
                      r"(?:理清|梳理|理一理|讲解|解释|说明|介绍)(?:一下)?\s*|"
                      r"[A-Za-z][\w\-]*\s*[\u4e00-\u9fff]{1,4}(?:里|中)\s+|"       # "history 展开里 !!"
                      r"[A-Za-z0-9\- ]+\s*(?:里|中|的)|[^，。？！“”]{1,12}?(?:书|笔记|教材|文档|讲义|章|节)(?:里|中)(?:的)?)+")
# a side written in quotes is the quoted term: "南瓜书中“算法”和“模型”的区别" compares 算法 and 模型
_QUOTED_SIDE = re.compile(r"[“\"「『']([^”\"」』']{1,40})[”\"」』']")
# a field both sides are values of: "Architecture: any 和 all 啥区别" compares "Architecture: any" and
# "Architecture: all" (a manual writes them so; "any" alone finds nothing)
_FIELD_BEFORE = re.compile(r"(?P<field>[A-Za-z][\w\-]*:)\s*$")
# a side's aside in brackets is the learner's gloss, not its name: "选项2（全员笔记本）" is 选项2; code keeps its
# brackets ("print()", "f(x)")
_ASIDE = re.compile(r"(?<=\S)\s*(?:（[^（）]*）|\((?=[^()]*[\s\u4e00-\u9fff])[^()]*\))")
_TAIL_ZH = re.compile(r"(?:之间|两者|二者|这两个|这两种|两个|两种|相比|比较|的)+$")


def comparison_sides(question: str) -> tuple[str, ...] | None:
    """The things compared (two to MAX_SIDES), cleaned of question words ("the", "请问"), or None when the
    question compares nothing it names."""
    found = _comparison(question)
    return found[0] if found else None


# A side that is a clause, not a thing: "what exit code do i get when a command isnt found vs when it exists but isnt
# executable?" sets two situations against each other, each an ask of its own (rag.parts splits them), not two
# things whose passages are found by their names. Data, tested in tests/test_kinds_and_scope.py.
CLAUSE_OPENERS = ("what", "which", "how", "when", "where", "why", "who", "whether", "if", "什么时候", "如果", "当")
_CLAUSE_SIDE = re.compile("^(?:" + "|".join(rf"{w}\b" if w.isascii() else w for w in CLAUSE_OPENERS) + ")",
                          re.IGNORECASE)


def compares_clauses(sides: tuple[str, ...]) -> bool:
    """Whether a side of the comparison is a clause (opens with a question word or "when"/"if"), not a thing."""
    return any(_CLAUSE_SIDE.match(side) for side in sides)


_BRACKETS = {"(": ")", "（": "）", "[": "]", "{": "}"}


def _unbalanced(side: str) -> bool:
    """Whether a side opens a bracket it does not close, or closes one it did not open."""
    for opening, closing in _BRACKETS.items():
        depth = 0
        for ch in side:
            depth += (ch == opening) - (ch == closing)
            if depth < 0:
                return True
        if depth:
            return True
    return False


def asks_what_each_is(question: str) -> bool:
    """Whether the question asks what each of the things it names is ("what are contexts and engravers?"), rather
    than how they differ: its sides (comparison_sides) are explained each, not compared."""
    found = _comparison(question)
    return found is not None and found[1].re in EACH_PATTERNS


def _comparison(question: str) -> tuple[tuple[str, ...], re.Match] | None:
    """The sides compared and the match of the phrasing that names them (the first pattern naming two or more)."""
    for pattern in (*COMPARISON_PATTERNS, *EACH_PATTERNS):
        m = pattern.search(question)
        if not m:
            continue
        choosing = bool(_CHOOSING.search(question))
        listed = [_clean(a, choosing) for a in _LISTED.split(m.group("a")) if a.strip()]
        more = [_clean(b, choosing) for b in _MORE_VS.split(m.group("b")) if b.strip()]
        sides = tuple(dict.fromkeys(side for side in [*listed, *more] if side))
        sides = _one_named(_without_shared_modifier(sides))
        if pattern in EACH_PATTERNS and any(side.split()[0].lower() in ASPECT_WORDS for side in sides if side):
            continue
        if any(_unbalanced(side) for side in sides):
            continue        # "a file (pdf or postscript) instead of …": an aside's "or" inside brackets joins no sides
        if len(sides) >= 2 and len({s.lower() for s in sides}) == len(sides) and all(listed):
            field = _FIELD_BEFORE.search(question[:m.start("a")])
            if field and not any(":" in side for side in sides):
                sides = tuple(f"{field.group('field')} {side}" for side in sides)
            return sides[:MAX_SIDES], m
    return None


# A sentence that states how the things compared differ, naming them by a word for the pair: "两者最明显的区别是通过网络
# 安装得到的当前可用的程序包", "the main difference between the two is that …". It is the book's own comparison though
# it names no more than one side, and leads the answer like a sentence naming every side (rag.tool). Tested in
# tests/test_shapes.py.
_ZH_PAIR = r"(?:两者|二者|这两者|这两种|这两个|两种方法|两种方式|它们|前者|后者|与之|和它)"
_ZH_DIFFERENCE_IS = r"(?:的)?(?:主要|最大|最明显|明显|根本|唯一|关键|本质|重要)?(?:的)?(?:区别|不同|差别|差异|不同之处)" \
                    r"(?:是|在于|就是|就在于)"
_EN_DIFFERENCE_IS = r"\b(?:the|one|another)\s+(?:(?:main|key|major|most obvious|obvious|big|biggest|important|only|" \
                    r"real|crucial|fundamental|essential|chief|principal|practical)\s+)?differences?\s+" \
                    r"(?:between\s+(?:them|the two|these two|those two|both)(?:\s+[\w-]+)?\s+)?(?:is|are|lies)\b"
STATES_DIFFERENCE_PATTERNS: list[re.Pattern] = [re.compile(p, re.IGNORECASE) for p in (
    rf"{_ZH_PAIR}[^，。！？；]{{0,8}}?{_ZH_DIFFERENCE_IS}",
    _EN_DIFFERENCE_IS,
    r"\b(?:the two|these two|both|they)\s+differ\s+(?:in|by|only|mainly|chiefly)\b",
)]


def states_the_difference(text: str) -> bool:
    """Whether a sentence says how a pair it names by a pronoun ("两者", "the two") differs."""
    return any(p.search(text) for p in STATES_DIFFERENCE_PATTERNS)


# Words that set one thing against another: a sentence naming the sides with one of them compares them ("\include 在
# 读入之前会另起一页。有的时候我们并不需要这样，而是用 \input 命令，它纯粹是把文件里的内容插入"), where one naming both
# without one may say the same of both ("使用 \include 和 \input 命令载入的文件名最好不要加空格").
CONTRAST_WORDS_EN = ("whereas", "while", "instead", "unlike", "but", "however", "in contrast", "on the other hand",
                     "rather than", "differ", "differs", "different", "differently", "difference", "differences")
# 而 not in 而且 (and also), 则 not in 否则, 规则, 原则, 法则, 准则
CONTRAST_WORDS_ZH = ("而是", "而不是", "而(?!且)", "但", "却", "不同", "区别", "差别", "相反", "(?<![否规原法准])则",
                     "反之", "与之", "相比", "相对")
_CONTRAST_EN = re.compile(r"\b(?:" + "|".join(re.escape(w) for w in CONTRAST_WORDS_EN) + r")\b", re.IGNORECASE)
_CONTRAST_ZH = re.compile("|".join(CONTRAST_WORDS_ZH))


def sets_against(text: str) -> bool:
    """Whether a sentence holds a word that sets one thing against another ("whereas", "而是", "不同")."""
    return bool(_CONTRAST_EN.search(text) or _CONTRAST_ZH.search(text) or states_the_difference(text))

# the question's own words beside its sides that say what they are compared in ("when i declare a param",
# "Nittedal 那个计划里 … 成本差多少"): a bare side ("default", ":=", "选项1") asked alone is found anywhere
CONTEXT_MAX_WORDS = 4
# what asks for the comparison, also misspelt ("whats the diffrence")
_COMPARING_WORD = re.compile(r"^(?:diff|compar|contrast|versus|pros|cons)|^(?:区别|不同|差别|差异|比较|对比|比一比|一比|相比|异同|一样|"
                             r"优缺点|优点|缺点|各有|利弊|好坏|关系)$")
# what asks the learner's choice between the sides ("which one do i pick", "我该用哪个"): a side searched with "pick"
# finds the book's history of how upsmon "picked up the concepts" rather than what each side is
CHOOSING_WORDS = frozenset("pick picking choose choosing chose select prefer preferred recommend recommended use using "
                           "go write try better best 选 选择 挑 挑选 用 该用 推荐".split())
# how the learner feels about the sides ("PAM 和 NSS 分别是干嘛的？老是分不清"): where they are compared, it is not
CONFUSED_WORDS = frozenset("confused confusing mix mixed 分不清 搞不清 搞混 混淆 老是 总是 晕 干嘛 干啥 啥".split())
# how the learner asks ("帮我理清一下…", "区别到底是啥"): not what the sides are compared in
ASKING_WORDS = frozenset("到底 究竟 一下 理清 梳理 讲讲 说说".split())


def side_context(question: str) -> list[str]:
    """The words of the question outside the comparison it makes that name a topic (rag.evidence.names_a_topic),
    up to CONTEXT_MAX_WORDS: what each side is searched with, so that a side is found where the question is."""
    from core.text import search_tokens
    from rag.evidence import names_a_topic
    found = _comparison(question)
    if found is None:
        return []
    sides, m = found       # the phrasing the sides came from, not merely the first pattern that matches
    # the rest of the question, and what cleaning took off the sides ("in the tex live installer")
    rest = f"{question[:m.start()]} {question[m.end():]} {m.group('a')} {m.group('b')} {m.groupdict().get('about') or ''}"
    named = {t for side in sides for t in search_tokens(side)}
    out: list[str] = []
    for token in search_tokens(rest):
        if token not in named and not _COMPARING_WORD.match(token) and token not in CHOOSING_WORDS and \
                token not in CONFUSED_WORDS and token not in ASKING_WORDS and \
                token not in out and names_a_topic(token):
            out.append(token)
    return out[:CONTEXT_MAX_WORDS]


# "给老师配电脑的选项1和选项2": what the first side is said of (给老师配电脑) is where both are compared, when the rest
# of it and another side begin or end alike (选项1, 选项2)
_MODIFIED = re.compile(r"^(?P<modifier>.+)的(?P<head>[^的]{2,})$")
SHARED_AFFIX_CHARS = 2


def _without_shared_modifier(sides: tuple[str, ...]) -> tuple[str, ...]:
    """The sides with a Chinese modifier ("X 的") taken off one whose head is shaped like another side."""
    out = []
    for k, side in enumerate(sides):
        m = _MODIFIED.match(side)
        head = m.group("head").strip() if m else ""
        if m and any(_alike(head, other) for j, other in enumerate(sides) if j != k and "的" not in other):
            side = head
        out.append(side)
    return tuple(out)


# "How is the new MCAS design different from the original one?": "one" is the first side's noun
_ONE = re.compile(r"^(?P<modifier>[\w\-]+(?:\s+[\w\-]+)?)\s+ones?$", re.IGNORECASE)


def _one_named(sides: tuple[str, ...]) -> tuple[str, ...]:
    """A side written as "<modifier> one" named with the noun of the side before it, its own modifier for that
    side's first word ("new MCAS design", "original one" -> "original MCAS design")."""
    out = list(sides)
    for k in range(1, len(out)):
        m = _ONE.match(out[k])
        words = out[k - 1].split()
        if m and len(words) >= 2:
            out[k] = f"{m.group('modifier')} {' '.join(words[1:])}"
    return tuple(out)


def _alike(a: str, b: str) -> bool:
    n = SHARED_AFFIX_CHARS
    return a != b and len(a) >= n and len(b) >= n and (a[:n] == b[:n] or a[-n:] == b[-n:])


def _clean(side: str, choosing: bool = False) -> str:
    quoted = _QUOTED_SIDE.search(side + ("”" if side.count("“") > side.count("”") else ""))
    if quoted:
        return _clean(quoted.group(1))
    side = _unbracketed(_ASIDE.sub("", side).strip(" \"'“”‘’「」《》"))
    side = _TAIL_EN.sub("", _LEAD_EN.sub("", side)).strip()
    if choosing:
        side = _LEAD_VERB.sub("", side).strip()
    side = _TAIL_ZH.sub("", _LEAD_ZH.sub("", side)).strip()
    side = re.sub(r"^(?:a|an|the)\s+", "", side, flags=re.IGNORECASE).strip(" \"'“”‘’「」《》")
    # a side is two characters or more, or one symbol ("& vs && in an if() condition")
    return side if 2 <= len(side) <= 60 or len(side) == 1 and not side.isalnum() else ""


def _unbracketed(side: str) -> str:
    """The side without brackets around it or left open at its ends ("(tuple" -> "tuple"), keeping those its
    code needs ("print()", "f(x)")."""
    for opening, closing in ("()", "（）"):
        while side and (side[0] == opening and side.endswith(closing) or
                        side.count(opening) != side.count(closing) and (side[0] == opening or side[-1] == closing)):
            if side[0] == opening and side.endswith(closing):
                side = side[1:-1]
            elif side[0] == opening:
                side = side[1:]
            else:
                side = side[:-1]
    return side.strip()
