"""Short forms and everyday words a reader writes where a document writes something else.

Computing's short forms and a learner's everyday words ("stdout", "args", "folder") beside the words a manual
or textbook uses for them ("standard output", "arguments", "directory"): "send both stdout and stderr into one
log file" met the Bash manual's "directs both standard output … and standard error" only by meaning, and "the
current folder" made a question about its prompt look unanswerable ("your documents never mention 'folder'").
These are searched beside the reader's word, never in its place, and a word whose other form the library holds
is not unknown (rag.evidence.unknown_words).

Financial abbreviations a reader writes and a filing spells out:

"Did Pfizer grow its PPNE between FY20 and FY21?" — the balance sheet says "Property, plant and equipment,
net", never "PPNE"; "FY2021 COGS" is "Cost of sales" in Nike's income statement. Neither BM25 nor a small
embedder links the two, and a word no chunk contains also makes the question look unanswerable
(rag.evidence.unknown_words). So the searched text carries the spelled-out words instead: only
abbreviations whose long form is how statements and notes name the line, not ones documents use as
written (EBITDA, GAAP).
"""
from __future__ import annotations

import re

# (how a question writes it, what the documents write). Case matters where a short form is also a word.
_SPELLED_OUT: list[tuple[re.Pattern, str]] = [(re.compile(pattern), text) for pattern, text in (
    (r"\b(?:[Nn]et\s+)?PP\s?&\s?E\b|\bPPNE\b|\bPPE\b", "property, plant and equipment"),
    (r"\bCOGS\b", "cost of goods sold (cost of sales)"),
    (r"\b[Cc]ap[Ee]x\b|\bCAPEX\b", "capital expenditures (purchases of property and equipment)"),
    (r"\bSG\s?&\s?A\b", "selling, general and administrative expenses"),
    (r"\bD\s?&\s?A\b", "depreciation and amortization"),
    (r"\bR\s?&\s?D\b", "research and development"),
    (r"\bEPS\b", "earnings per share"),
    (r"\b[Yy]o[Yy]\b", "year over year"),
    (r"\bFCF\b", "free cash flow"),
    (r"\b[Tt]op[- ]line\b", "revenue"),            # idioms, not abbreviations, but the same gap
    (r"\b[Bb]ottom[- ]line\b", "net income"),
)]


# (what a reader writes, what a document writes). Lower case; matched as whole words in any case.
ALSO_WRITTEN: dict[str, str] = dict([
    ("stdout", "standard output"), ("stderr", "standard error"), ("stdin", "standard input"),
    ("folder", "directory"), ("folders", "directories"), ("subfolder", "subdirectory"),
    ("cwd", "current working directory"), ("pwd", "current working directory"),
    ("args", "arguments"), ("arg", "argument"), ("params", "parameters"), ("param", "parameter"),
    ("config", "configuration"), ("configs", "configuration files"), ("env", "environment"),
    ("repo", "repository"), ("repos", "repositories"), ("func", "function"), ("funcs", "functions"),
    ("var", "variable"), ("vars", "variables"), ("exe", "executable"), ("dir", "directory"),
    ("regex", "regular expression"), ("regexp", "regular expression"), ("regexes", "regular expressions"),
    ("int", "integer"), ("bool", "boolean"), ("str", "string"), ("obj", "object"), ("attr", "attribute"),
    ("attrs", "attributes"), ("init", "initialization"), ("auth", "authentication"), ("admin", "administrator"),
    ("dict", "dictionary"), ("dicts", "dictionaries"), ("doc", "documentation"), ("docs", "documentation"),
])
_ALSO_WRITTEN = re.compile(r"\b(" + "|".join(sorted(map(re.escape, ALSO_WRITTEN), key=len, reverse=True)) + r")\b",
                           re.IGNORECASE)


_CODE_BEFORE = tuple("/~.{$@%=[<\\")     # a character that puts the word inside a path or code
_CODE_AFTER = tuple("/:}=[]()")


def other_forms(word: str) -> list[str]:
    """The words a document may write for a reader's `word` (lower case), split into words; [] when none."""
    other = ALSO_WRITTEN.get(word.lower())
    return other.split() if other else []


def spell_out(text: str) -> str:
    """The text with each known financial abbreviation replaced by the words documents use for it, and each
    reader's short form or everyday word followed by the document's (ALSO_WRITTEN): "stdout (standard output)"."""
    for pattern, words in _SPELLED_OUT:
        text = pattern.sub(words, text)
    said = [text.lower()]        # the document's word once: the text has it already, or an earlier match added it

    def beside(m: re.Match) -> str:
        other = ALSO_WRITTEN[m.group().lower()]
        # a piece of a path or of code is a name, not a word: "user@host:~/dir$" asks about the prompt, not
        # directories, and "${var:-默认值}" is syntax to find as written
        in_code = text[m.start() - 1:m.start()] in _CODE_BEFORE or text[m.end():m.end() + 1] in _CODE_AFTER
        if in_code or any(other in words for words in said):
            return m.group()
        said.append(other)
        return f"{m.group()} ({other})"
    return _ALSO_WRITTEN.sub(beside, text)
