"""What to search for: a question without the instructions about the answer's form.

"… Round your answer to two decimal places." is meant for whoever writes the answer, not for the search:
its words find the wrong passages ("shall be rounded to the nearest whole number") and dilute the evidence
score of the right ones. The composing model still gets the whole question; only retrieval and the
evidence check read the focus.
"""
from __future__ import annotations

import re

_NUMBER_WORD = r"(?:\d+|one|two|three|four|five|a few|a couple of)"

# Spans that say how to answer, not what is asked. Each is generic (any reader may write it), never a topic.
_INSTRUCTIONS = [re.compile(p, re.IGNORECASE) for p in (
    # rounding, as an instruction of its own ("How do I round the total to two decimals?" asks it)
    r"(?P<lead>^|[.?!:;,(，。？！：；（]\s*|\band\s+)(?:please\s+)?round(?:ing)?\s+(?:off\s+)?"
    r"(?:your|the|all)?\s*(?:final\s+)?(?:answers?|results?|figures?|numbers?|values?)?\s*to\s+"
    rf"(?:the\s+nearest\s+\w+|{_NUMBER_WORD}\s+(?:decimal(?:\s+places?|\s+points?)?|significant\s+(?:figures|digits)))",
    r"\b(?:please\s+)?(?:answer|respond|reply|express (?:it|your answer)|give (?:your|the) answer)"
    r"\s+in\s+(?:units|terms)\s+of\s+\w+",
    # length and shape of the answer
    rf"\b(?:please\s+)?(?:answer|respond|reply|explain|summari[sz]e)?\s*(?:it\s+)?in\s+(?:at most\s+|no more than\s+)?"
    rf"{_NUMBER_WORD}\s+(?:short\s+)?(?:sentences?|words?|paragraphs?|bullet(?:\s+points?)?|lines?)\b",
    r"\b(?:please\s+)?(?:be\s+(?:brief|concise)|keep it (?:short|brief)|think step by step|step by step|"
    r"show your (?:work|working|reasoning|steps))\b",
    # what to say when the question does not apply ("If gross margin is not a useful metric for a company like
    # this, then state that and explain why"): the condition only repeats what the question asks
    r"(?P<lead>^|[.?!;:]\s*)if\b[^.?!]*?,?\s*then\s+(?:please\s+)?(?:state|say|mention|note|explain)\s+(?:that|so|this)"
    r"(?:\s+and\s+explain\s+why)?",
    # a role to play ("Approach the question asked by assuming the standpoint of an investment banking analyst who
    # only has access to the statement of income"): the role goes, what it may read ("the statement of income") stays
    r"\b(?:(?:please\s+)?approach (?:the|this) question(?:\s+asked)?\s+by\s+)?(?:assuming|taking|adopting)\s+the\s+"
    r"(?:standpoint|perspective|point of view|viewpoint|role)\s+of\s+(?:an?|the)\s+[^.?!,;]*?"
    r"(?:\s+(?:who|that)\s+(?:only\s+)?(?:has|have)\s+access\s+to\b|(?=[.?!,;]|$))",
    r"\bas if you were (?:an?|the) [^.?!,;]*?(?=[.?!,;]|$)",
    # filler around the question itself
    r"\b(?:please\s+)?answer the following question(?:s)?(?:\s+to the best of your abilit(?:y|ies))?\s*:?",
    r"\bhere(?:'s| is) (?:the|my|our) question\s*:",
    r"\b(?:please\s+)?help (?:us|me) (?:to\s+)?(?:compute|calculate|answer|work out) (?:it|this)\b",
    # a learner's hedges and asides: "can someone explain what upsd actually does" found the project history's "is
    # actually usable" (a rare word in a manual weighs much)
    r"\b(?:actually|really|basically|literally|honestly|someone|somebody|anyone|anybody|anyway|lol|pls|plz|idk|tbh)\b",
    # Chinese
    r"(?:请)?(?:结果|答案)?保留(?:[一二两三四五六七八九\d]+)位(?:小数|有效数字)",
    r"(?:请)?(?:用|以)(?:[一二两三四五\d]+)(?:句话|个字|段话?|点)(?:以内)?(?:来)?"
    r"(?:回答|概括|说明|总结|解释)?",
    r"(?:请)?(?:简要|简单|简短)(?:地)?(?:回答|说明|概括)",
    r"(?:请)?(?:一步一步|逐步)(?:地)?(?:思考|推理|计算)",
)]
# "… Answer in units of percents and round to one decimal place." leaves an "and" behind
_DANGLING = re.compile(r"\s*\b(?:and|or)\s*(?=[.?!;:)）]|$)", re.IGNORECASE)
_LEFTOVER = re.compile(r"\s*([.?!;,:，。？；：])(?:\s*[.;,:，。；：])+")


def search_focus(question: str) -> str:
    """The question with answer-format instructions taken out; the question itself if nothing is left."""
    focus = question
    for pattern in _INSTRUCTIONS:
        focus = pattern.sub(lambda m: (m.groupdict().get("lead") or "") + " ", focus)
    if focus == question:
        return question.strip()
    focus = _DANGLING.sub("", focus)
    focus = re.sub(r"(?<![\w.])\(\s*\)|（\s*）", "", focus)       # brackets emptied, not a call's: "outer()"
    focus = _LEFTOVER.sub(r"\1", focus)
    focus = re.sub(r"\s+", " ", focus).strip(" .;,:，；：")
    if not re.search(r"\w", focus):
        return question.strip()
    return focus + ("?" if question.rstrip().endswith("?") and not focus.endswith("?") else "")
