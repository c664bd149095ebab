"""A question quoting a book's syntax finds where the book writes it (rag.syntax), with the real stores."""
from __future__ import annotations

import pytest

from rag.syntax import syntax_patterns
from tests.libraries import text_library


@pytest.mark.parametrize("question, written", [
    ("why doesnt `for i in {1..$n}` work?", ["A sequence expression takes the form {x..y[..incr]}"]),
    ("$* vs $@ in double quotes?", ['"$*" is equivalent to "$1c$2c..."', '"$@" is equivalent to "$1" "$2"']),
    ("${var:-默认值} 跟 ${var:=默认值} 有什么区别？", ["${parameter:\u2212word}", "${parameter:=word}"]),
    ("what does 2>&1 do?", ["ls > dirlist 2>&1"]),
    ("how does <<- work in R?", ["the operator <<- assigns in the enclosing environment"]),
    ("[[ ]] vs [ ]?", ["the [[ compound command"]),
    # an option as a manual lists it
    ("what does set -e actually do?", ["-e Exit immediately if a pipeline returns a non-zero status."]),
    ("is --posix mode different?", ["Starting Bash with the --posix command-line option"]),
    # a colon that is the syntax's own (Make's "%:"), and a token that ends at Chinese punctuation
    ("debian/rules 里面就剩一个 %: 和 dh $@，这俩到底啥意思？", ["16 %:", "17 dh $@"]),
    # a function named with empty parentheses is found where the book calls it
    ("any example where outer() is actually useful?", ['> d <- outer(0:9, 0:9)']),
    ("why does t = t.sort() break my code?", ["t = t.sort()  # WRONG!"]),
])
def test_quoted_syntax_meets_the_books_own_placeholders(question, written):
    syntax = syntax_patterns(question)
    assert syntax
    for text in written:
        assert any(s.pattern.search(text) and s.literal in text for s in syntax), (text, syntax)


@pytest.mark.parametrize("question", [
    "What is a list? (see p. 3)...", "is it 5% or 10%?", "wow!! that's odd, lol!", "what does \\begin{tabular} do?",
    "my prompt should look like user@host:~/dir$", "第三章（上）讲了什么？", "please e-mail me", "is it -1 here?",
    "what is $x& here",      # one symbol left once the name is taken off: too little to find anything by
])
def test_prose_punctuation_and_named_commands_are_not_syntax(question):
    """Prose punctuation is not code, and a command with a name ("\\begin{tabular}") is found by its words."""
    assert syntax_patterns(question) == ()


SHELL_BOOK = """# Shell Manual

## Chapter 3 Basic Shell Features

### 3.2.5 Looping Constructs

The syntax of the for command is: for name in words; do commands; done. The commands in the body of the loop
run once for every word, with name set to that word.

### 3.5.1 Brace Expansion

Brace expansion is a mechanism by which arbitrary strings may be generated. A sequence expression takes the form
{x..y[..incr]}, where x and y are either integers or letters. Brace expansion is performed before any other
expansions, and any characters special to other expansions are preserved in the result. It is strictly textual.

### 3.5.2 Tilde Expansion

If a word begins with an unquoted tilde character, all of the characters up to the first unquoted slash are
considered a tilde-prefix. The tilde is replaced with the value of the HOME shell variable.

### 3.5.3 Word Splitting

The shell scans the results of parameter expansion, command substitution, and arithmetic expansion that did not
occur within double quotes for word splitting. The shell treats each character of IFS as a delimiter.
"""


def test_a_question_quoting_syntax_finds_the_passage_that_writes_it(tmp_path):
    """No word of "why doesnt `for i in {1..$n}` work? it just prints {1..5}" names brace expansion, and the
    section on for loops shares a word: the passage writing {x..y} is found by the syntax, first."""
    tool = text_library(tmp_path / "data", (SHELL_BOOK, "Shell Manual", "shell.md"))
    question = "why doesnt `for i in {1..$n}` work? it just prints {1..5}"
    best = tool.evidence(question, tool.retrieve(question).answering_hits, kind="why")[0]
    assert "{x..y[..incr]}" in best.unit.text, best.unit.text


def test_a_unit_writing_the_quoted_syntax_counts_for_more(tmp_path):
    """The same question with and without its syntax: the passage writing {x..y} is worth more when it is quoted."""
    tool = text_library(tmp_path / "data", (SHELL_BOOK, "Shell Manual", "shell.md"))

    def brace_score(question: str) -> float:
        evidence = tool.evidence(question, tool.retrieve(question).answering_hits, kind="why")
        return next(e.score for e in evidence if "{x..y[..incr]}" in e.unit.text)

    quoted = brace_score("why doesnt `for i in {1..$n}` work in my loop?")
    plain = brace_score("why doesnt for i in 1 to n work in my loop?")
    assert quoted > plain + 0.05, (quoted, plain)


def test_a_function_call_is_not_found_in_the_word_alone_or_inside_a_longer_name():
    call = syntax_patterns("any example where outer() is actually useful?")[0].pattern
    assert call.search("ab <- outer(a, b)") and not call.search("Outer margins are useful")
    assert not call.search("x.outer(a)") and not call.search("router(a)")


R_BOOK = """# An Introduction to R

## 5.5 The outer product of two arrays

An important operation on arrays is the outer product. The outer product is formed by the special operator %o%:

    > ab <- a %o% b

An alternative is

    > ab <- outer(a, b, "*")

As an artificial but cute example, consider the determinants of 2 by 2 matrices of single digits.

    > d <- outer(0:9, 0:9)
    > fr <- table(outer(d, d, "-"))

## 12.5 Multiple figure environment

Outer margins are particularly useful for page-wise titles, etc. Text can be added to the outer margins with the
mtext() function. There are no outer margins by default, however, so you must create them explicitly.
"""


def test_a_word_the_question_calls_as_a_function_is_not_evidence_where_the_book_never_calls_it(tmp_path):
    """"any example where outer() is actually useful?" shares "outer" and "useful" with the sentence on a plot's
    outer margins; the brackets say the function is meant, so the passage calling outer() answers first."""
    tool = text_library(tmp_path / "data", (R_BOOK, "An Introduction to R", "r-intro.md"))
    question = "any example where outer() is actually useful?"
    evidence = tool.evidence(question, tool.retrieve(question).answering_hits, kind="example")
    assert evidence[0].hit.chunk.heading_path[-1].startswith("5.5"), evidence[0].unit.text
    margins = next(e for e in evidence if e.unit.text.startswith("Outer margins"))
    assert margins.score < evidence[0].score - 0.1, (margins.score, evidence[0].score)


def test_an_option_is_not_found_inside_a_word_or_a_longer_option():
    option = syntax_patterns("what does set -e do?")[0].pattern
    assert option.search("-e Exit immediately") and option.search("set -e")
    assert not option.search("set-e") and not option.search("-ex") and not option.search("re-enter")


# As the Bash manual's "Special Parameters" reaches the text: each parameter an entry, its name written once at the
# entry's head, the sentences after it speaking of "the expansion" without naming it. The double-quote section
# names both parameters in one line and says nothing of either.
PARAMETERS_BOOK = """# Shell Manual

## 3.1.2.3 Double Quotes

Enclosing characters in double quotes preserves the literal value of all characters within the quotes, with the
exception of the dollar sign, the backquote and the backslash. The special parameters '*' and '@' have special
meaning when in double quotes. A double quote may be quoted within double quotes by preceding it with a backslash.

## 3.4.2 Special Parameters

The shell treats several parameters specially. These parameters may only be referenced; assignment to them is not
allowed.

* ($*) Expands to the positional parameters, starting from one. When the expansion is not within double quotes,
each positional parameter expands to a separate word. When the expansion occurs within double quotes, it expands
to a single word with the value of each parameter separated by the first character of the IFS special variable.

@ ($@) Expands to the positional parameters, starting from one. When the expansion occurs within double quotes,
each parameter expands to a separate word. That is, "$@" is equivalent to "$1" "$2" and so on.

# ($#) Expands to the number of positional parameters in decimal.

? ($?) Expands to the exit status of the most recently executed foreground pipeline.
"""


def test_a_side_written_in_symbols_is_told_by_its_entry_and_ends_with_it(tmp_path):
    """"$* vs $@ in double quotes": each side is what its entry says — the sentence on double quotes belongs to the
    entry whose head writes the parameter, though it never names it — and a side stops where the next entry begins."""
    tool = text_library(tmp_path / "data", (PARAMETERS_BOOK, "Shell Manual", "shell.md"))
    answer = tool.ask("$* vs $@ - whats the diffrence when theyre in double quotes").text
    star = answer.split("**$***")[1].split("**$@**")[0] if "**$***" in answer else answer.split("`$*`")[1]
    at = answer.split("**$@**")[1] if "**$@**" in answer else answer.split("`$@`")[1]
    assert "single word" in star and "separate word" in at, answer
    assert "($#)" not in at and "number of positional parameters" not in answer, answer


@pytest.mark.parametrize("text, name, writes", [
    ("[[...]] [[ expression ]] Return a status of 0 or 1", "[[ ]]", True),
    ("* ($*) Expands to the positional parameters", "$*", True),
    ("@ ($@) Expands to the positional parameters", "$*", False),
    ("The test and [ builtin commands", "[[ ]]", False),
    ("A tuple is an immutable sequence", "tuple", False),      # a name in words is found by its words
])
def test_a_name_in_symbols_is_written_where_all_its_patterns_are(text, name, writes):
    from rag.syntax import writes_symbols
    assert writes_symbols(text, name) is writes


KPATHSEA_BOOK = """# TeX Live 指南

## 3.4 环境变量

此外，如果只希望把一个个人目录加入特定的搜索路径，设置环境变量是合理的：

TEXINPUTS=.:/my/macro/dir:

为保证这个设计可以一直被维护和兼容，在末尾加入一个 ‘:’ (Windows 下用 ‘;’) 来加入系统路径，而不是完全替代系统路径。
另一个选项是使用 TEXMFHOME 树。

## 7.1 路径来源

如果最高优先级的搜索路径中包含一个额外的冒号 (即前置、后置或连续的冒号)，Kpathsea 将在此处插入次高优先级的搜索路径。
"""


def test_the_line_a_question_quotes_does_not_answer_it_the_books_sentence_about_it_does(tmp_path):
    """"书里写 TEXINPUTS=.:/my/macro/dir: 末尾还多一个冒号，这个冒号到底啥意思？" The quoted line holds every symbol asked
    about, but the learner has it already: the answer leads with what the book says of the colon, and the line,
    ending in its own colon, is not taken for a sentence introducing a list."""
    tool = text_library(tmp_path / "data", (KPATHSEA_BOOK, "TeX Live 指南", "texlive.md"))
    question = "书里写 TEXINPUTS=.:/my/macro/dir: 末尾还多一个冒号，这个冒号到底啥意思？"
    best = tool.evidence(question, tool.retrieve(question).answering_hits, kind="explain")[0]
    assert "冒号" in best.unit.text or "‘:’" in best.unit.text, best.unit.text
    answer = tool.ask(question)
    assert not answer.text.startswith("**TEXINPUTS=.:/my/macro/dir:"), answer.text


def test_a_unit_is_quoted_whole_only_when_the_question_holds_all_of_it():
    from rag.evidence import quotes_whole
    question = "书里写 TEXINPUTS=.:/my/macro/dir: 末尾还多一个冒号"
    assert quotes_whole(question, "TEXINPUTS=.:/my/macro/dir:") and quotes_whole(question, "TEXINPUTS = .:/my/macro/dir:")
    assert not quotes_whole(question, "TEXINPUTS=.;$TEXMF/tex//") and not quotes_whole(question, "末尾")  # too short


RULES_BOOK = """# 新维护者手册

## 4.4 rules 文件

新版本的 dh_make 会生成一个非常简单的默认 rules 文件：

 1 #!/usr/bin/make -f
 2 #DH_VERBOSE = 1

 3 %:
 4 	dh $@

可以取消第 2 行的注释，以设置 DH_VERBOSE 变量为 1，于是命令就会输出它将要调用的程序。第 3 和 4 行使用了 pattern rule。
其中的百分号意味着“任何 targets”，它会以 target 名称作参数调用单个程序。这个程序是一个包装脚本，它会依次执行妥当的程序序列。

## 4.5 附加功能

– 使用 dh $@ --with quilt – 这会在构建时自动应用或解除 debian/patches 目录中的补丁。

– 使用 dh $@ --with bash-completion – 这会使用 debian 目录中的配置文件来安装 bash 补全。
"""


def test_the_prose_after_the_listing_a_question_quotes_explains_it():
    """"debian/rules 里面就剩一个 %: 和 dh $@，这俩到底啥意思？": the sentences after the listing writing all of the quoted
    syntax explain it without writing it; the line before the listing introduces it, and a line writing part of it
    ("dh $@ --with quilt") is about something else, as is what follows it."""
    from rag.evidence import explains_listing, split_units
    syntax = syntax_patterns("debian/rules 里面就剩一个 %: 和 dh $@，这俩到底啥意思？")
    rules, extras = RULES_BOOK.split("## 4.4 rules 文件")[1].split("## 4.5 附加功能")
    units = split_units(rules)
    explaining = [u.text for u in units if u.start in explains_listing(units, rules, syntax)]
    assert any("任何 targets" in text for text in explaining) and any("包装脚本" in text for text in explaining)
    assert not any("dh_make" in text or "dh $@" in text for text in explaining), explaining
    assert explains_listing(split_units(extras), extras, syntax) == set()
    # a line ending as a sentence does is prose, not a listing; across a heading the prose is another section's
    assert explains_listing(split_units(RULES_BOOK), RULES_BOOK, syntax_patterns("dh $@ 是什么意思？")) == {
        u.start for u in split_units(RULES_BOOK) if "DH_VERBOSE 变量" in u.text or "pattern rule" in u.text
        or "任何 targets" in u.text or "包装脚本" in u.text}
