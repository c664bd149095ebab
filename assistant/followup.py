"""Follow-up questions: rewrite a question with the conversation only when it depends on it.

"How does recursion work?" after a question about tuples is a new question and must be searched alone;
"and in 2016?", "why?" or "how is it different from a list?" cannot be understood without the turn
before. A question depends on the conversation when it points back (a pronoun or demonstrative with
nothing to point at inside the question, "the second one"), continues ("and …", "what about …",
"那…呢"), or is too short to stand alone. Only then is it rewritten: by the LLM when there is one (its
rewrite is shown to the person as "Searched for: …"), else by joining it to the previous question.

A model's rewrite is checked before it is searched (`rewrite_problem`): it must be one question about the
conversation's topic. A small model answers instead ("软间隔允许部分样本不满足约束。[1]") or brings words of
its own ("code snippet" where the person said "code"); such a rewrite is rejected and the question joined
to the previous one. Even an accepted rewrite's words are not the person's: `own_words` lists the searched
words the person wrote, and only those can be called "never mentioned in your documents".
"""
from __future__ import annotations

import logging
import re

from assistant import prompts
from core.errors import LLMError
from core.text import CJK_CHAR, detect_language, search_tokens, stem

log = logging.getLogger(__name__)

_POINTS_BACK_EN = re.compile(
    r"\b(it|its|it's|they|them|their|theirs|this|that|these|those|he|she|him|her|his|"
    # "the second one", "what about the second?" point back; "the second quarter", "the same time" do not
    r"the (first|second|third|last|other|same) ones?|the (first|second|third|last|other|same)(?=\s*[?.!,;]|\s*$)|"
    r"the former|the latter|"
    r"the above|previous|mentioned)\b", re.IGNORECASE)
_CONTINUES_EN = re.compile(r"^\s*(and|or|but|also|so|then|what about|how about|what else|"
                           r"anything else|more|example|for example|such as|in what way|give me an example|"
                           r"show me an example|tell me more)\b", re.IGNORECASE)
# Not 其 or 该 alone: they sit inside ordinary words (其他, 尤其, 应该).
_POINTS_BACK_ZH = re.compile(r"它|它们|他们|她们|这个|那个|这些|那些|这种|那种|这样|那样|上述|前者|后者|第[一二三四五六七八九十]个")
# A demonstrative after words placing it in the book ("书里那个例子", "第 3 章那个公式") or a superlative ("最前面那个字母")
# is described by the question itself; alone ("那个函数的参数是什么？") or after "上面" it points back.
_PLACED_DEMONSTRATIVE_ZH = re.compile(r"(?:书|文|手册|教材|指南|章|节|里|中|最[^\s，。？！]{1,4})[的]?(?:这|那)(?:个|些|种)")
_CONTINUES_ZH = re.compile(r"^\s*(那|那么|还有|另外|以及|和|而|举个例子|比如|例如)|呢[?？]?\s*$")
# "Why?", "why not?", "为什么？" continue the conversation; "Why can a tuple be a dictionary key?" names what it
# asks about and stands alone.
_WHY = re.compile(r"^\s*(and\s+)?(why|为什么|为啥|怎么会)(\s+not\b)?", re.IGNORECASE)
MIN_TERMS_ALONE = 2             # a why-question naming this many content words needs no earlier turn


def depends_on_conversation(question: str) -> bool:
    """Whether the question needs the turns before it to be understood."""
    text = question.strip()
    why = _WHY.match(text)
    if why and len(search_tokens(text[why.end():])) < MIN_TERMS_ALONE:
        return True
    if detect_language(text) == "zh":
        if _POINTS_BACK_ZH.search(_PLACED_DEMONSTRATIVE_ZH.sub("", text)) or _CONTINUES_ZH.search(text):
            return True
        return not search_tokens(text)
    if _CONTINUES_EN.search(text):
        return True
    pointers = {m.group(0).lower() for m in _POINTS_BACK_EN.finditer(text)}
    if pointers - {"that"} - _SUBJECT_PRONOUNS or ("that" in pointers and _that_points_back(text)):
        return True
    if pointers & _SUBJECT_PRONOUNS and _points_back_as_subject(text):
        return True
    return not search_tokens(text)       # "why?", "how so?": nothing to search for on its own


# A pronoun the question itself gives a noun to before it, as the subject of its own clause, points inside the
# question: "what exit code do i get when a command isnt found vs when it exists" (it: the command), "I defined a
# function but it returns None". Not as an object ("What does chapter 3 say about it?", "an example of it") nor
# with no noun before it ("How is it different from a list?").
_SUBJECT_PRONOUNS = frozenset({"it", "they"})


def _points_back_as_subject(text: str) -> bool:
    """Whether an "it" or "they" of the question has no noun before it, or is not a clause's subject (spaCy's
    English parser: core.nlp.english_parse)."""
    from core.nlp import english_parse
    noun_before = False
    for word, tag, dep in english_parse(text):
        if word in _SUBJECT_PRONOUNS and (not noun_before or dep not in ("nsubj", "nsubjpass")):
            return True
        noun_before = noun_before or tag.startswith("NN")
    return False


def _that_points_back(text: str) -> bool:
    """"What does that mean?" points back; "the function that returns …" (a relative pronoun, tagged WDT) and
    "is it true that …" (a conjunction, IN) do not. Told by spaCy's English tagger alone (core.nlp.english_tags)."""
    from core.nlp import english_tags
    return any(word == "that" and tag not in ("WDT", "IN") for word, tag in english_tags(text))


def previous_question(question: str, history: list[dict]) -> str | None:
    earlier = _user_turns(question, history)
    return earlier[-1] if earlier else None


def _user_turns(question: str, history: list[dict]) -> list[str]:
    return [t["content"] for t in history if t.get("role") == "user" and isinstance(t.get("content"), str)
            and t["content"].strip() and t["content"].strip() != question.strip()]


JOINED = "joined with the previous question"
REJECTED = JOINED + " (the model's rewrite was not a question about it: {reason})"


def standalone_question(question: str, history: list[dict], llm=None) -> tuple[str, str]:
    """(what to search for, how it was made: "as asked" | "rewritten by the LLM" | "joined with the
    previous question" | "joined with the previous question (the model's rewrite was not a question about
    it: …why…)")."""
    before = previous_question(question, history)
    if before is None or not depends_on_conversation(question):
        return question, "as asked"
    if llm is not None:
        turns = [t for t in history if t.get("role") in ("user", "assistant") and isinstance(t.get("content"), str)]
        conversation = "\n".join(f"{t['role']}: {t['content'][:400]}" for t in turns[-4:])
        try:
            reply = llm.complete(
                [{"role": "user", "content": prompts.CONDENSE.format(conversation=conversation, question=question)}],
                max_tokens=80, temperature=0.0)
        except LLMError:
            log.warning("rewriting a follow-up question failed; joining it to the previous one", exc_info=True)
        else:
            rewritten = _cleaned(reply)
            said = [t["content"] for t in turns if t["content"].strip() != question.strip()]
            problem = rewrite_problem(rewritten, question, before, said)
            if problem is None:
                return rewritten, "rewritten by the LLM"
            log.info("the model's rewrite %r of %r was rejected (%s); joining it to the previous question",
                     rewritten, question, problem)
            return f"{before} {question}", REJECTED.format(reason=problem)
    return f"{before} {question}", JOINED


def own_words(question: str, history: list[dict], searched: str) -> frozenset[str]:
    """The English words of `searched` (lower case) that the person wrote, in the question or an earlier one,
    in any form ("snippets" for "snippet"): the only words of a rewritten question that may be called never
    mentioned in the documents. A word the model brought is not the person's."""
    person = " ".join(_user_turns(question, history) + [question])
    theirs = {w.lower() for w in _LATIN.findall(person)}
    keys = {_english_key(w) for w in theirs}
    return frozenset(theirs | {w for w in (x.lower() for x in _LATIN.findall(searched)) if _english_key(w) in keys or
                               any(_same_word(_english_key(w), k) for k in keys)})


# -- is the model's rewrite a question about the conversation? ------------------------------------------

_LATIN = re.compile(r"[A-Za-z]+")
_LABEL = re.compile(r"^\s*(standalone question|rewritten question|rewrite|question|改写后的问题|改写|问题)\s*[:：]\s*",
                    re.IGNORECASE)
_QUOTES = "\"'“”‘’「」`*"
_CITATION = re.compile(r"\[\s*\d+(\s*[,，\-–]\s*\d+)*\s*\]|【\s*\d+\s*】|\[(source|来源)\s*\d*\]", re.IGNORECASE)
_ASKS_EN = frozenset("what how why when which who whom whose where is are was were does do did can could should "
                     "would will may might explain show give tell describe compare list define name summarize "
                     "summarise".split())
_ASKS_ZH = re.compile(r"什么|怎么|如何|为什么|为何|哪|吗|呢|是否|多少|几|请|能否|可否|怎样|是不是|有没有")
_TELLS_ZH = re.compile(r"^(请|解释|说明|介绍|举|比较|列出|给出|描述|讲|说说|谈谈|总结|概括)")
_SENTENCE_INSIDE = re.compile(r"[.!?](?=\s+[\"'(\[A-Z])|[。！？](?=.)")   # a sentence ends inside
_CLAUSES = re.compile(r"[,，;；、]")
MAX_CLAUSE_MARKS = 2            # "What does X depend on, and why?" has one; an answer strings several
# Words that shape a question and may appear in a rewrite though the conversation never used them.
_PHRASING_EN = frozenset("mean means meaning meant explain explains explained explanation describe description "
                         "tell show give define defined definition difference differences different differ "
                         "compare comparison happen happens happened many much kind kinds type types please "
                         "exactly also else more another other between versus vs regard regarding respect terms "
                         "context specifically".split())
_PHRASING_ZH = frozenset("什么 怎么 怎样 如何 为什么 为何 哪 哪些 哪个 哪里 哪种 吗 呢 是否 多少 几 请 请问 能否 能 可以 "
                         "可否 意思 含义 意味着 指 是指 定义 区别 不同 差别 异同 解释 说明 介绍 描述 讲讲 说说 一下 "
                         "中 里 上 下 时 后 前 又 还 有 对 和 与 在 的 中的 方面 之间 具体 到底 究竟 分别".split())
_PHRASING_ZH_CHARS = "".join(w for w in _PHRASING_ZH if len(w) == 1)


def _cleaned(reply: str) -> str:
    text = _LABEL.sub("", (reply or "").strip()).strip().strip(_QUOTES).strip()
    return "\n".join(line.strip() for line in text.splitlines() if line.strip())


def rewrite_problem(rewritten: str, question: str, before: str, conversation: list[str]) -> str | None:
    """Why the model's rewrite of a follow-up cannot be searched for it, or None when it can: it must be one
    question (not an answer: no citation marks, no sentences stating facts, not much longer than the question
    and the one before it together), about the conversation's topic (a word of it), with no word the question,
    the conversation (the person's questions and the assistant's answers) or the phrasing of a question does
    not already have: "snippet" added to "show me the code for that example" is the model's word, not theirs."""
    text = rewritten.strip()
    if len(text) <= 3:
        return "empty"
    if "\n" in text:
        return "more than one line"
    if len(text) > 1.5 * (len(question) + len(before)) + 20:
        return "much longer than the question and the one before it"
    if _CITATION.search(text):
        return "it cites sources, as an answer does"
    body = text.rstrip("?？!！.。 ")
    if _SENTENCE_INSIDE.search(body) or len(_CLAUSES.findall(body)) > MAX_CLAUSE_MARKS:
        return "it states things over several sentences or clauses, as an answer does"
    if not _reads_as_question(text):
        return "it is not a question"
    words = _content_words(text)
    if not words:
        return "it names nothing to search for"
    said = "\n".join(conversation)
    acronyms = frozenset(w.lower() for w in _LATIN.findall(text) if w.isupper() and 2 <= len(w) <= 6)
    new = [w for w in words if not _said(w, question + "\n" + said, acronyms)]
    if new:
        return "it adds words the conversation never used: " + ", ".join(dict.fromkeys(new))
    if not any(_said(w, said, acronyms) for w in words):
        return "it shares no word with the conversation"
    return None


def _reads_as_question(text: str) -> bool:
    if detect_language(text) == "zh":
        if text.endswith(("？", "?")):
            return True
        if text.endswith(("。", ".")):
            return bool(_TELLS_ZH.search(text))
        return bool(_ASKS_ZH.search(text))
    first = _LATIN.match(text.lstrip("¿ "))
    return text.endswith("?") or bool(first and first.group().lower() in _ASKS_EN)


def _content_words(text: str) -> list[str]:
    out = []
    for token in search_tokens(text):
        if token in _PHRASING_EN or (CJK_CHAR.search(token) and _only_phrasing(token)):
            continue
        if token not in out:
            out.append(token)
    return out


def _only_phrasing(token: str) -> bool:
    """A Chinese token made of question phrasing only ("解释一下")."""
    for word in sorted(_PHRASING_ZH, key=len, reverse=True):
        token = token.replace(word, "")
    return not token


def _said(word: str, text: str, acronyms: frozenset[str] = frozenset()) -> bool:
    """The word, in some form, is in the text: a Chinese word as written (however jieba cuts the text), an
    English one by its stem ("SVMs" for "SVM", "disagreement" for "disagree"), one of the `acronyms` (written
    in capitals) also as the initials of the words it abbreviates ("AOA" for "angle of attack")."""
    if not word.isascii():     # jieba may cut a function character onto a word ("支持向量机中" -> "机中")
        return word in text or (word.strip(_PHRASING_ZH_CHARS) or word) in text
    key = _english_key(word)
    words = [w.lower() for w in _LATIN.findall(text)] if word.isalpha() else search_tokens(text, keep_stopwords=True)
    if any(key == _english_key(w) or _same_word(key, _english_key(w)) for w in words):
        return True
    return word in acronyms and word in "".join(w[0] for w in words)


def _english_key(word: str) -> str:
    key = stem(word.lower())
    return key[:-1] if key.endswith("s") and len(key) > 3 else key


def _same_word(a: str, b: str) -> bool:
    short, long_ = sorted((a, b), key=len)
    return len(short) >= 4 and long_.startswith(short)
