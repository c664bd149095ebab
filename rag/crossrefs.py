"""The sections a passage sends its reader to: "see Section 9.1 [Bash History Facilities], page 152", "详见第 6 章".

A manual answers a question in one place and points to where the details are: the Bash manual's passage that a
question about the history's size finds says the history list is on "(see Section 9.1 [Bash History
Facilities], page 152)", where HISTSIZE and HISTFILE are, in words the question did not use. A learner follows
such a pointer; so does the search (rag.tool: the referred section's best chunk joins the passages). The
phrasings are data, both languages, tested (tests/test_crossrefs.py).
"""
from __future__ import annotations

import re

from rag.outline import chinese_number

_POINTER_EN = r"(?:see|see also|cf\.|described in|discussed in|explained in|covered in|defined in|refer to)"
_NUMBER = r"(?P<n>\d+(?:\.\d+)*)"
_ZH_NUMBER = r"(?P<n>[0-9零〇一二两三四五六七八九十]+)"
_POINTER_ZH = r"(?:参见|详见|参看|参考|请看|见)"

# (unit, pattern): the group "n" is the section's number as its heading states it
REFERENCE_PATTERNS: list[tuple[str, re.Pattern]] = [
    ("section", re.compile(rf"\b{_POINTER_EN}\s+(?:the\s+)?(?:section|sect\.|§)\s*{_NUMBER}", re.IGNORECASE)),
    ("chapter", re.compile(rf"\b{_POINTER_EN}\s+(?:the\s+)?chapter\s*(?P<n>\d+)\b", re.IGNORECASE)),
    ("section", re.compile(rf"{_POINTER_ZH}\s*第?\s*(?P<n>\d+(?:\.\d+)+)\s*(?:节|小节)")),
    ("section", re.compile(rf"{_POINTER_ZH}\s*(?P<n>\d+\.\d+(?:\.\d+)*)(?!\d)")),
    ("chapter", re.compile(rf"{_POINTER_ZH}\s*第\s*{_ZH_NUMBER}\s*章")),
]


def referenced_numbers(text: str) -> list[str]:
    """The numbers of the sections and chapters `text` points to, in order, each once ("9.1", "6")."""
    found: list[tuple[int, str]] = []
    for _, pattern in REFERENCE_PATTERNS:
        for match in pattern.finditer(text):
            number = match.group("n")
            if not number.replace(".", "").isdigit():
                number = str(chinese_number(number) or "")
            if number:
                found.append((match.start(), number.rstrip(".")))
    out: list[str] = []
    for _, number in sorted(found):
        if number not in out:
            out.append(number)
    return out
