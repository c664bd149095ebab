"""A command a manual writes on a line of its own, without a prompt: "tlmgr install <package-name>",
"dpkg --search < 文件名 >", "upsdrvctl -t shutdown".

A PDF gives a book's code as plain lines, so a manual's commands were read as prose (glued into the sentence
around them: "共同作者：Knut Yrvin dpkg --search < 文件名 > 可以看起来像这样 …") or as a table of short lines. A
how-to answer wants them as code: shown whole, as the book sets them. A line is a command when it starts with a
program's name — a lower-case word English rarely uses ("the -v option prints more" starts with a common one) —
and goes on with what a command line holds: options, <placeholders>, paths, assignments; not a sentence's words.
"""
from __future__ import annotations

import re
from functools import lru_cache

from core.text import CJK_CHAR, STOPWORDS

# How common in English a program's name may be (wordfreq's zipf scale): dpkg 1.4, grep 2.1, git 3.4, ls 3.7,
# echo 4.0, cat 4.8 are names; "make" 6.1, "man" 5.8, "source" 5.2 start sentences too often to be told apart.
PROGRAM_NAME_MAX_ZIPF = 5.0
COMMAND_MAX_TOKENS = 12
_PROGRAM = re.compile(r"[a-z][a-z0-9_.+-]*")
_PLACEHOLDER = re.compile(r"<\s*[^<>\n]{1,40}?\s*>")
_OPTION = re.compile(r"--?[A-Za-z][\w-]*(?:=\S*)?")
# what else an argument of a command line looks like: a path, a variable, an assignment; and weaker, as a table
# row's cells look too ("libpam-module-0 V:0, I:0 100 plug-in"), a number, a file's name, a glob, a quote
_ARGUMENT_MARK = re.compile(r"[/~$=]")
_WEAK_MARK = re.compile(r"[*{}\[\]\"'@]|^\d[\d.]*$|^[\w.-]+\.\w{1,4}$")
WEAK_COMMAND_MAX_TOKENS = 3      # "pdflatex file.tex"
# a prompt with its host and directory before it: "tjener:~# dpkg --search …", "pi@raspberrypi:~ $ ls"
HOST_PROMPT = re.compile(r"^\s*[\w.-]+(?:@[\w.-]+)?:[~/][^\s#$]*\s?[#$]\s+\S")
# a command after a bare "> " prompt, as the TeX Live guide writes them: "> tlmgr option repository http://…"
_BARE_PROMPT = re.compile(r"^\s*>\s+(\S.*)$")
# a shell comment after a command ("xdvi sample2e.dvi # Unix") says which system it is for, not what the line is
_TRAILING_COMMENT = re.compile(r"\s+#\s.*$")
_SENTENCE_END = (".", "。", ":", "：", ",", "，", ";", "；", "!", "！", "?", "？")


@lru_cache(maxsize=4096)
def _common(word: str) -> bool:
    from wordfreq import zipf_frequency
    return zipf_frequency(word, "en") >= PROGRAM_NAME_MAX_ZIPF


def is_command_line(line: str) -> bool:
    """Whether the line is a command without a prompt: a program's name and at least one option, placeholder, path,
    variable or assignment (a short line: a file's name or a number), no sentence's words (no stop word, nothing
    Chinese outside a placeholder, no list of cells), no sentence end."""
    text = _TRAILING_COMMENT.sub("", line.strip())
    if not text or text.endswith(_SENTENCE_END):
        return False
    marked = _PLACEHOLDER.sub(" <_> ", text)
    if CJK_CHAR.search(marked):
        return False
    tokens = marked.split()
    if not 2 <= len(tokens) <= COMMAND_MAX_TOKENS or not _PROGRAM.fullmatch(tokens[0]) or _common(tokens[0]):
        return False
    marks = weak = 0
    for token in tokens[1:]:
        if token.endswith(","):          # a list's or a row's cells, not a command's arguments
            return False
        if token == "<_>" or _OPTION.fullmatch(token) or _ARGUMENT_MARK.search(token):
            marks += 1
        elif _WEAK_MARK.search(token):
            weak += 1
        elif token.casefold() in STOPWORDS:
            return False
    return marks > 0 or (weak > 0 and len(tokens) <= WEAK_COMMAND_MAX_TOKENS)


def is_prompted_command(line: str) -> bool:
    """Whether the line is a command after a bare "> " prompt ("> tlmgr option repository http://…"); R's "> x <- 1"
    is told by evidence.PROMPT_LINE."""
    m = _BARE_PROMPT.match(line)
    return bool(m) and is_command_line(m.group(1))
