"""A question that quotes a book's syntax finds where the book writes it.

Learners paste syntax: "why doesnt `for i in {1..$n}` work", "$* vs $@", "[[ ]] vs [ ]", "what does 2>&1 do", "outer()",
"${var:-默认值} 跟 ${var:=默认值} 有什么区别". Word search drops the punctuation that carries their meaning, and a
small embedder hardly reads it, so the Bash manual's "A sequence expression takes the form {x..y[..incr]}" was
never found for "{1..$n}". A syntax token is a piece of the question made mostly of symbols; it becomes a pattern
in which its letters and digits are placeholders ("{1..$n}" -> "{…..…}") and its symbols are kept, so it meets the
book's own placeholders ("{x..y}"). Chunks holding the pattern are one more ranked list for retrieval
(rag.retrieve), and units holding it score a little more as evidence (rag.evidence).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

# Symbols that make a token code rather than prose punctuation ("??", "...", "(see p. 3)" are prose).
_CODE_SYMBOLS = set("{}[]$@#&|<>=~^\\%*!")
# a token ends at a space or at Chinese punctuation ("dh $@，这俩啥意思" quotes "$@")
_TOKEN = re.compile(r"`([^`]{2,40})`|([^\s，。？！；：、（）“”]{2,40})")
# a name, a number or words, with a variable's $: "$n", "x", "1", "默认值"
_PLACEHOLDER = re.compile(r"\$?[A-Za-z0-9_\u4e00-\u9fff]+")
_PROSE_EDGES = "?.,;:'\"()（）？。，"
_PROSE_ENDS = "?.,;:'\"？。，"
# a function named with empty parentheses, as learners write it: "outer()", "np.dot()", "tapply()"
_CALL = re.compile(r"([A-Za-z_][\w.]*[A-Za-z0-9_])\(\)")
GAP = r"[^\s]{0,12}?"
MAX_LETTER_SHARE = 0.5      # "\begin{tabular}" is found by its words; "{1..$n}" only by its symbols
MAX_PATTERNS = 4


@dataclass(frozen=True)
class Syntax:
    pattern: re.Pattern
    literal: str        # symbols every match holds as written ("..", "${", ">&"): what the index is asked for
    call: str = ""      # the function's name when the question calls one ("outer" for "outer()")


@lru_cache(maxsize=256)
def syntax_patterns(question: str) -> tuple[Syntax, ...]:
    """The syntax the question quotes, in order, at most MAX_PATTERNS; () when it quotes none. Cached: retrieval
    and the evidence scorer both ask it of the same question."""
    out: list[Syntax] = []
    seen: set[str] = set()
    for match in _TOKEN.finditer(question):
        for token in (match.group(1) or match.group(2)).split():
            call = _CALL.fullmatch(token.rstrip(_PROSE_ENDS))
            name = call.group(1) if call else ""
            if call:        # "outer()": the function, where the book calls it, not "outer margins"
                pattern, literal = rf"(?<![\w.]){re.escape(name)}\(", f"{name}("
            else:
                stripped = token.strip(_PROSE_EDGES) if not match.group(1) else token
                # a colon or dot that leaves one symbol was the syntax's own: Make's "%:"
                pattern = _pattern_of(stripped) or (_pattern_of(token) if len(stripped) < 2 else None)
                literal = _longest_literal(token) if pattern else ""
            if pattern and pattern not in seen:
                seen.add(pattern)
                out.append(Syntax(re.compile(pattern), literal, name))
    return tuple(out[:MAX_PATTERNS])


def _longest_literal(token: str) -> str:
    """The longest run of the token's symbols that a match holds as written (a minus may be typeset otherwise)."""
    runs = re.findall(r"[^\sA-Za-z0-9_\u4e00-\u9fff-]+", _PLACEHOLDER.sub(" ", token) if re.search("[A-Za-z]", token)
                      else token)
    return max(runs, key=len) if runs else token


_OPTION = re.compile(r"--?[A-Za-z][A-Za-z0-9-]{0,20}")


def _pattern_of(token: str) -> str | None:
    """The token as a pattern (None when it is not syntax): names and numbers become gaps, symbols stay, and a
    token of symbols and digits alone ("2>&1") is kept as written. A minus also meets the typeset minus (U+2212)."""
    if _OPTION.fullmatch(token):      # an option as a manual lists it: "set -e", "complete -o", "--posix"
        return rf"(?<![\w-]){re.escape(token)}(?![\w-])"
    letters = sum(ch.isascii() and ch.isalpha() for ch in token)      # a placeholder in Chinese is not a name
    if not any(ch in _CODE_SYMBOLS for ch in token) or sum(not ch.isalnum() for ch in token) < 2 or \
            letters > MAX_LETTER_SHARE * len(token):
        return None
    if not letters:
        return _literal(token)
    parts = [part for part in re.split(f"({_PLACEHOLDER.pattern})", token) if part]
    while parts and _PLACEHOLDER.fullmatch(parts[0]):       # a name at either end adds nothing to find
        parts.pop(0)
    while parts and _PLACEHOLDER.fullmatch(parts[-1]):
        parts.pop()
    symbols = [part for part in parts if not _PLACEHOLDER.fullmatch(part)]
    if sum(len(part) for part in symbols) < 2:          # as written: "$x&" keeps one symbol, not its escape's two
        return None
    return "".join(GAP if _PLACEHOLDER.fullmatch(part) else _literal(part) for part in parts)


def _literal(text: str) -> str:
    """Symbols as a pattern; a minus also meets the typeset minus sign (U+2212) a PDF's text layer often holds."""
    return "".join("[-\u2212]" if ch == "-" else re.escape(ch) for ch in text)


def writes_symbols(text: str, name: str) -> bool:
    """Whether the text writes a name made of symbols ("$*", "[[ ]]" as "[[...]]"): every pattern of it; False for
    a name with words, or with too few symbols to be syntax."""
    syntax = syntax_patterns(name)
    return bool(syntax) and all(s.pattern.search(text) for s in syntax)


def names_but_never_calls(unit_text: str, section: str, syntax: tuple[Syntax, ...]) -> bool:
    """Whether the unit names a function the question calls ("outer()") only as a word, in a section that never
    calls it: the word in another sense ("Outer margins are particularly useful …" for "where is outer() useful?")."""
    return any(s.call and re.search(rf"\b{re.escape(s.call)}\b", unit_text, re.IGNORECASE)
               and not s.pattern.search(section) for s in syntax)


def holds_syntax(text: str, syntax: tuple[Syntax, ...]) -> bool:
    return any(s.pattern.search(text) for s in syntax)


def ranked_by_syntax(texts: dict[str, str], syntax: tuple[Syntax, ...]) -> list[str]:
    """The ids of the texts holding the syntax, those holding more of its patterns (then more matches) first."""
    scored = []
    for cid, text in texts.items():
        counts = [len(s.pattern.findall(text)) for s in syntax]
        if any(counts):
            scored.append((-sum(1 for c in counts if c), -sum(counts), cid))
    return [cid for *_, cid in sorted(scored)]
