"""Follow-up questions: rewrite a question with the conversation only when it depends on it.

"How does recursion work?" after a question about tuples is a new question and must be searched alone;
"and in 2016?", "why?" or "how is it different from a list?" cannot be understood without the turn
before. A question depends on the conversation when it points back (a pronoun or demonstrative with
nothing to point at inside the question, "the second one"), continues ("and …", "what about …",
"那…呢"), or is too short to stand alone. Only then is it rewritten: by the LLM when there is one (its
rewrite is shown to the person as "Searched for: …"), else by joining it to the previous question.
"""
from __future__ import annotations

import logging
import re

from assistant import prompts
from core.errors import LLMError
from core.text import detect_language, search_tokens

log = logging.getLogger(__name__)

_POINTS_BACK_EN = re.compile(
    r"\b(it|its|it's|they|them|their|theirs|this|that|these|those|he|she|him|her|his|"
    # "the second one", "what about the second?" point back; "the second quarter", "the same time" do not
    r"the (first|second|third|last|other|same) ones?|the (first|second|third|last|other|same)(?=\s*[?.!,;]|\s*$)|"
    r"the former|the latter|"
    r"the above|previous|mentioned)\b", re.IGNORECASE)
_CONTINUES_EN = re.compile(r"^\s*(and|or|but|also|so|then|what about|how about|why( not)?|and why|what else|"
                           r"anything else|more|example|for example|such as|in what way|give me an example|"
                           r"show me an example|tell me more)\b", re.IGNORECASE)
# Not 其 or 该 alone: they sit inside ordinary words (其他, 尤其, 应该).
_POINTS_BACK_ZH = re.compile(r"它|它们|他们|她们|这个|那个|这些|那些|这种|那种|上述|前者|后者|第[一二三四五六七八九十]个")
_CONTINUES_ZH = re.compile(r"^\s*(那|那么|还有|另外|以及|和|而|为什么|为啥|怎么会|举个例子|比如|例如)|呢[?？]?\s*$")


def depends_on_conversation(question: str) -> bool:
    """Whether the question needs the turns before it to be understood."""
    text = question.strip()
    if detect_language(text) == "zh":
        if _POINTS_BACK_ZH.search(text) or _CONTINUES_ZH.search(text):
            return True
        return not search_tokens(text)
    if _CONTINUES_EN.search(text):
        return True
    if _POINTS_BACK_EN.search(text):
        return True
    return not search_tokens(text)       # "why?", "how so?": nothing to search for on its own


def previous_question(question: str, history: list[dict]) -> str | None:
    earlier = [t["content"] for t in history if t.get("role") == "user" and isinstance(t.get("content"), str)
               and t["content"].strip() and t["content"].strip() != question.strip()]
    return earlier[-1] if earlier else None


def standalone_question(question: str, history: list[dict], llm=None) -> tuple[str, str]:
    """(what to search for, how it was made: "as asked" | "rewritten by the LLM" | "joined with the
    previous question")."""
    before = previous_question(question, history)
    if before is None or not depends_on_conversation(question):
        return question, "as asked"
    if llm is not None:
        conversation = "\n".join(f"{t['role']}: {t['content'][:400]}" for t in history[-4:]
                                 if t.get("role") in ("user", "assistant") and isinstance(t.get("content"), str))
        try:
            rewritten = llm.complete(
                [{"role": "user", "content": prompts.CONDENSE.format(conversation=conversation, question=question)}],
                max_tokens=80, temperature=0.0).strip().strip('"').splitlines()[0].strip()
            if 3 < len(rewritten) < 4 * len(question) + 200:
                return rewritten, "rewritten by the LLM"
        except (LLMError, IndexError):
            log.warning("rewriting a follow-up question failed; joining it to the previous one", exc_info=True)
    return f"{before} {question}", "joined with the previous question"
