"""What a person reads: answer units, evidence, "not in your documents", extractive answers, citation
numbering, the check of composed answers — with the real embedding model and real stores, and the real
local model composing an answer on a tiny context."""
from __future__ import annotations

import re

import pytest

from rag.answer import CitationRenumberer, renumber
from rag.evidence import split_units, units_after
from rag.tool import RAGTool
from rag.types import Answer, SourcesEvent

BOOK = """# Tuples

A tuple is a sequence of values. The values can be any type, and they are indexed by integers.
Syntactically, a tuple is a comma-separated list of values:

>>> t = 'a', 'b', 'c'
>>> len(t)
3

Tuples are immutable, so you cannot change their elements. Because tuples are immutable, they can be
used as keys in a dictionary.

# Recursion

A function that calls itself is recursive; the process of executing it is called recursion.
If a recursion never reaches a base case, it goes on making recursive calls forever.

```
def countdown(n):
    if n <= 0:
        print('Blastoff!')
    else:
        countdown(n-1)
```

# Exercises

Write a function that takes a tuple and returns its length. Why are tuples immutable?

# Revenue

| Year | Total revenue |
|---|---|
| 2017 | 7,301.5 |
| 2016 | 5,854.4 |
"""

CONTENTS = """# Contents

1 Tuples ........................ 3
2 Recursion ..................... 9
3 Dictionaries .................. 14
4 Files ......................... 20
5 Classes ....................... 31
"""

ZH = """# 支持向量机

支持向量机的基本思想是在样本空间中找到一个划分超平面，使正负样本之间的间隔最大。
离划分超平面最近的几个训练样本点被称为支持向量。

# 过拟合

过拟合是指模型把训练样本自身的特点当作所有样本都具有的一般性质，导致泛化性能下降。
"""


@pytest.fixture
def library(settings):
    tool = RAGTool("reader", settings)
    tool.add_text(BOOK, title="Think Python notes", name="think.md")
    tool.add_text(CONTENTS, title="Contents", name="contents.md")
    tool.add_text(ZH, title="南瓜书笔记", name="pumpkin.md")
    return tool


def stream(tool, question):
    items = list(tool.ask_stream(question))
    assert isinstance(items[-1], Answer)
    return items, items[-1]


# -- units ----------------------------------------------------------------------------------------------

def test_what_a_model_copies_from_its_instruction_or_a_docstring_is_not_its_answer():
    from rag.answer import without_echo
    from rag.shapes import shape_of
    explain = shape_of("explain")
    text = ('RMSNorm scales each vector by its root mean square. [1]\n\nIn two or three plain sentences:\n'
            'It has one learnable weight. [1]\n\n""" [2]\n\n```\ndef f():\n    """doc"""\n```')
    cleaned = without_echo(text, explain.instruction_for(False))
    assert "plain sentences" not in cleaned and cleaned.count('"""') == 2         # the code block's stay
    assert "RMSNorm scales" in cleaned and "one learnable weight" in cleaned
    assert without_echo("用两三句通俗的话解释：它是一种归一化。[1]", explain.instruction_for(True)) == "它是一种归一化。[1]"

def test_the_question_written_back_by_a_model_is_not_its_answer():
    from rag.answer import without_echo
    from rag.shapes import shape_of
    compare = shape_of("compare").instruction_for(True)
    question = "预训练和 SFT 在代码实现上到底差在哪？loss 是一样算的吗？"
    # what the 0.5B model wrote for it (held-out hz-010): both halves of the question, one reworded, and a cut end
    text = ("loss 是一样算的吗 [1]？\n[2] 预训练和 SFT 在代码实现上到底差在哪？ [2] 可以看到，SFT Dataset 和 Pretrain "
            "Dataset 的 X 和 Y 是一样的。 [3]\n\n[3] 预训练和 SFT 在代码实现上都差在哪？ [2]loss 是一样算的吗")
    assert without_echo(text, compare, question) == "可以看到，SFT Dataset 和 Pretrain Dataset 的 X 和 Y 是一样的。 [3]"
    # a question of the model's own, and an answer that reuses the question's words, stay
    kept = "Why does sorting fail? Because the list is mutable. [1] A tuple is not"
    assert without_echo(kept, "", "What is the difference between a list and a tuple?") == kept
    assert without_echo("random.random() returns a float between 0.0 and 1.0. [1]", "",
                        "which function returns a random float?") == \
        "random.random() returns a float between 0.0 and 1.0. [1]"


def test_a_numbered_heading_kept_as_text_is_a_heading():
    """A PDF's third-level heading the converter left as a line of text ("A.2.2. My program hangs.") answers nothing,
    and an explanation's continuation stops before it; a sentence that starts with a number stays a sentence."""
    text = ("A.2.1. My program does absolutely nothing.\n\nThis problem is most common when your file defines "
            "functions but never calls one.\n\nA.2.2. My program hangs.\n\nIf a program stops and seems to be doing "
            "nothing, it is hanging.\n\n3.14 is close to pi, which the math module gives exactly.")
    units = split_units(text)
    assert [u.text[:10] for u in units] == ["This probl", "If a progr", "3.14 is cl"]
    assert units_after(units[0], text) == []

def test_an_abbreviations_full_stop_ends_no_sentence():
    """"(p. 7)" cut a sentence of the TeX Live guide in two, and its citation was shown between the halves; "e.g.",
    "Fig. 3" and "No. 5" end nothing either, while "etc." and a number's full stop may end a sentence."""
    text = ("安装方法将在下面的章节介绍 (p. 7)，这里提供一个快速入门。 Use a dict, e.g. Python's own. It is drawn in "
            "Fig. 3 of the book. See item No. 5 there. Lists, tuples, etc. These are sequences. The value is 5. 7 is next.")
    assert [u.text for u in split_units(text)] == [
        "安装方法将在下面的章节介绍 (p. 7)，这里提供一个快速入门。", "Use a dict, e.g. Python's own.",
        "It is drawn in Fig. 3 of the book.", "See item No. 5 there.", "Lists, tuples, etc.", "These are sequences.",
        "The value is 5.", "7 is next."]


def test_a_sentence_a_page_break_cut_is_one_unit():
    """A page (or column) that ends mid-sentence leaves a blank line in it: "By default all variables (except binary"
    / "ones) have no lower bound" is one sentence, in Chinese too after a comma; a paragraph that ends with a full
    stop, a heading-like line before a capitalised sentence, and a list item stay apart."""
    text = ("At most one lower bound can be specified. By default all variables (except binary\n\nones) have no lower "
            "bound, so a zero lower bound must be given.\n\nThe upper bound is optional.\n\n运行混合的版本，\n\n"
            "会冒更大的风险。\n\nOptional attributes\n\nInteger values are allowed.\n\n• first item\n\n• second item"
            "\n\nFor more complex music, you must introduce the lyrics in a\n\nLyrics context using \\new Lyrics.")
    assert [u.text for u in split_units(text)] == [
        "At most one lower bound can be specified.",
        "By default all variables (except binary ones) have no lower bound, so a zero lower bound must be given.",
        "The upper bound is optional.", "运行混合的版本，会冒更大的风险。", "Optional attributes",
        "Integer values are allowed.", "• first item", "• second item",
        # a part ending in a word no sentence ends with goes on, though the next begins with a capital (a name)
        "For more complex music, you must introduce the lyrics in a Lyrics context using \\new Lyrics."]


def test_units_keep_code_tables_and_drop_headings():
    units = split_units(BOOK)
    kinds = [(u.kind, u.text.split("\n")[0]) for u in units]
    assert ("code", ">>> t = 'a', 'b', 'c'") in kinds                  # an interpreter example stays whole
    code = next(u for u in units if u.text.startswith(">>>"))
    assert code.text.endswith("3")                                     # with its output
    assert any(u.kind == "code" and u.text.startswith("def countdown") for u in units)   # a fenced block
    assert not any(u.text.startswith(("#", "```")) for u in units)     # headings and fences answer nothing
    rows = [u for u in units if u.kind == "table"]
    assert len(rows) == 2 and all(r.text.startswith("| Year | Total revenue |") for r in rows)
    assert "| 2017 | 7,301.5 |" in rows[0].text                         # a row never leaves its header
    for u in units:                                                    # offsets point at the text shown
        assert BOOK[u.start:u.end].split()[0].strip("`") in u.text or u.kind == "table"


# -- answers ---------------------------------------------------------------------------------------------

def test_extractive_answer_answers_first_then_quotes_each_cited_once(library):
    items, answer = stream(library, "What is a tuple?")
    assert isinstance(items[0], SourcesEvent) and items[0].citations and not items[0].related
    assert answer.mode == "extractive" and not answer.refused
    first_line = answer.text.split("\n")[0]
    assert first_line.startswith("**A tuple is a sequence of values.**") and first_line.endswith("[1]")
    numbers = [int(n) for n in re.findall(r"\[(\d+)\]", answer.text)]
    assert sorted(set(numbers)) == list(range(1, max(numbers) + 1))    # 1..n, no gaps
    assert [c.n for c in answer.citations] == list(range(1, len(answer.citations) + 1))
    quoted = [line for line in answer.text.split("\n") if line.strip() and line.strip() != "```"]
    assert len(quoted) == len(set(quoted))                              # no sentence twice
    assert "...." not in answer.text                                    # never the table of contents
    assert all(c.strength in ("strong", "partial", "weak") for c in answer.citations)


def test_code_stays_code_and_exercises_are_not_answers(library):
    _, answer = stream(library, "How do I write a recursive countdown function?")
    assert "```\ndef countdown(n):\n    if n <= 0:" in answer.text
    _, tuples = stream(library, "Why are tuples immutable?")
    assert "Write a function" not in tuples.text.split("\n")[0]


def test_a_number_question_quotes_the_table_row_with_its_header(library):
    _, answer = stream(library, "What was the total revenue in 2017?")
    assert "7,301.5" in answer.text and "Total revenue" in answer.text


def test_questions_the_documents_do_not_answer_are_declined_with_related_passages(library):
    for question, language in (("Who painted the Mona Lisa?", "en"), ("What is the boiling point of mercury?", "en"),
                               ("长城有多长？", "zh")):
        items, answer = stream(library, question)
        assert answer.refused, (question, answer.text)
        assert ("not in your documents" in answer.text) if language == "en" else ("文档中没有" in answer.text)
        assert answer.related and not answer.citations
        assert isinstance(items[0], SourcesEvent) and items[0].related
    _, zh = stream(library, "什么是支持向量机？")
    assert not zh.refused and "间隔最大" in zh.text


def filing(n_segments: int) -> str:
    """A long filing-like document: one section per segment, each with its revenue by year."""
    kinds = ["airplanes", "satellites", "engines", "services", "parts", "training", "software", "leasing"]
    return "\n\n".join(
        f"# Segment {i}\n\nThe {kinds[i % 8]} segment {i} reported revenue of {1000 + 37 * i:,}.{i % 10} million in "
        f"2017 and {900 + 29 * i:,}.{i % 7} million in 2016, driven by deliveries to airlines and governments. "
        f"Operating margins in segment {i} moved with pricing, volume and the cost of {kinds[(i + 3) % 8]}."
        for i in range(n_segments))


def test_a_question_naming_what_a_long_document_never_mentions_is_declined(settings):
    tool = RAGTool("analyst", settings)
    tool.add_text(filing(420), title="Aerospace annual report", name="aero_10k.md")
    # Every other word matches a revenue sentence, and the embedder finds it close: "bicycles", in no chunk
    # of a long document, is what says the asked thing is not there.
    assert tool.unknown_words("What was the revenue from bicycles in 2017?") == ["bicycles"]
    _, answer = stream(tool, "What was the revenue from bicycles in 2017?")
    assert answer.refused and answer.text.endswith("Your documents never mention “bicycles”."), answer.text
    _, answered = stream(tool, "What was the revenue of the satellites segment 1 in 2017?")
    assert not answered.refused and "1,037.1" in answered.text


def test_an_untranslated_question_over_books_all_in_the_other_language_is_told_so(settings):
    """Without a model an English question over a Chinese library is matched by meaning alone; when that is too
    weak, the refusal says why and what to do, not that the documents "never mention" English words."""
    tool = RAGTool("reader", settings)
    tool.add_text(ZH, title="南瓜书笔记", name="pumpkin.md")
    _, answer = stream(tool, "Which roles run the school's IT, according to this manual, and who does what?")
    assert answer.refused and "never mention" not in answer.text, answer.text
    assert answer.text.endswith("asking in Chinese finds more."), answer.text


def test_a_word_one_letter_off_the_librarys_is_read_as_the_library_writes_it(settings):
    """A reader's slip ("revnue", "satelites") is searched as the book spells it and never called unknown; a
    word no closer than that ("bicycles"), or too short to tell a slip from another word, stays as typed."""
    tool = RAGTool("analyst", settings)
    tool.add_text(filing(120), title="Aerospace annual report", name="aero_10k.md")
    assert tool.respelled("What was the revnue of the satelites segment 1 in 2017?") == \
        "What was the revenue of the satellites segment 1 in 2017?"
    assert tool.respelled("What was the revenue from bicycles?") == "What was the revenue from bicycles?"
    # an English word of its own one letter off the library's ("pricking": its stem is one letter off "pricing"'s)
    # is never rewritten
    assert tool.store.spelled_alike(tool.user_id, "pricking") == "pricing"
    assert tool.respelled("Was there any pricking in segment 1?") == "Was there any pricking in segment 1?"
    assert tool.respelled("How big are the prts?") == "How big are the prts?"        # "parts": too short to tell
    _, answer = stream(tool, "Can someone tell me the revnue of the satelites segment 1 in 2017?")
    assert not answer.refused and "1,037.1" in answer.text, answer.text


LINKS_ZH = """# 链接

硬链接是指向同一个 inode 的另一个文件名，删除原文件后硬链接仍然可以访问数据。
软链接（也叫符号链接）是一个特殊文件，保存的是另一个文件的路径；原文件删除后软链接就失效了。
"""


def test_a_chinese_side_one_character_off_the_librarys_term_is_read_as_the_library_writes_it(settings):
    """An input-method slip in a compared side ("软连接" for the book's 软链接) is searched as the book writes it, so
    that side is found; a side the library holds, a short one and one no term is close to stay as typed."""
    from core.text import chinese_slip_for
    tool = RAGTool("reader", settings)
    tool.add_text(LINKS_ZH, title="链接笔记", name="links.md")
    assert tool.respelled("硬链接和软连接有什么区别？") == "硬链接和软链接有什么区别？"
    assert tool.respelled("硬链接和软链接有什么区别？") == "硬链接和软链接有什么区别？"
    assert tool.respelled("量子计算和经典计算有什么区别？") == "量子计算和经典计算有什么区别？"
    assert chinese_slip_for("链结", [LINKS_ZH]) is None                      # two characters: too many words are that close
    assert chinese_slip_for("软连接", ["软链接、软链接、软件接口"]) == "软链接"   # the most written of the close ones
    # a match inside other words is no term: "网连接" in 因特网连接 / 互联网连接 (the Debian reference has eight)
    assert chinese_slip_for("软连接", ["家里的因特网连接和办公室的网络连接都很慢，网络的连接也断了。" * 4 +
                                      "软链接是一个特殊文件。"]) == "软链接"
    _, answer = stream(tool, "硬链接和软连接有什么区别？")
    assert "**软链接**" in answer.text and "**软连接**" not in answer.text, answer.text     # the side named as the book does
    assert "保存的是另一个文件的路径" in answer.text and "删除原文件后硬链接仍然可以访问" in answer.text, answer.text


def test_unknown_words_leave_out_abbreviations_short_words_known_words_and_short_libraries():
    from rag.evidence import UNKNOWN_WORDS_MIN_CHUNKS, unknown_words
    df = {"revenue": 3, "tuple": 2, "sold": 1, "ppne": 0, "jnj": 0, "cat": 0, "many": 0, "bicycles": 0, "red": 0,
          "someone": 0, "thing": 0, "stuff": 0}
    assert unknown_words("What is the PPNE and JnJ revenue of the tuple for a cat?", df, 500) == []
    assert unknown_words("Can someone explain the tuple thing, and its stuff?", df, 500) == []     # fillers
    # a contraction typed without its apostrophe names nothing asked about
    assert unknown_words("How do I make a tuple? Sorting it doesnt seem to work", {**df, "doesnt": 0}, 500) == []
    # what a learner wants done, and English's commonest words, name no topic
    assert unknown_words("I want to sort a tuple instead, really", {**df, "want": 0, "instead": 0, "really": 0},
                         500) == []
    assert unknown_words("How many Bicycles were sold, and were the bicycles red?", df, 500) == ["bicycles"]
    assert unknown_words("How many bicycles were sold?", df, UNKNOWN_WORDS_MIN_CHUNKS - 1) == []
    assert unknown_words("How many bicycles were sold?", {"sold": 1}, 500) == []   # not looked up: not judged
    # a family the reader lists, of which the book writes some: "what do the d p q r in dnorm, pnorm, qnorm mean?"
    family = {"dnorm": 0, "pnorm": 2, "qnorm": 0, "letters": 4, "front": 5, "mean": 9}
    assert unknown_words("what do the letters in front of dnorm, pnorm, qnorm mean?", family, 500) == []
    assert unknown_words("what do the letters in front of dnorm and qnorm mean?", family, 500) == ["dnorm", "qnorm"]


PEOPLE = """# 张世昌

2011年性格火爆的张世昌在作客深圳队（实是在当时的临时主场惠州）的赛事中出彩，与看台的球迷发生小冲突。
张世昌（1985－），中国足球运动员，司职守门员，以火爆的性格闻名。

# 当惹雍错

当惹雍错环湖一周的路况起伏不大，2001年起有游客前往。
当惹雍错环湖一周约250公里，多数路段可通汽车。
"""


def test_a_chinese_definition_names_its_subject_first(settings):
    tool = RAGTool("reader", settings)
    tool.add_text(PEOPLE, title="人物与湖泊", name="people.md")
    _, answer = stream(tool, "张世昌的职业是什么？")
    assert "足球运动员" in answer.text.split("\n")[0]      # "X（…），中国足球运动员" defines X; a stray 是 does not


def test_a_term_glossed_after_a_colon_is_read_as_its_definition():
    """"查准率 P：…" and "variable: A name…" define the term they open with; a colon later in a sentence, or after
    another word, does not."""
    from rag.evidence import defines
    assert defines("查准率 P：被学习器预测为正例的样例中有多大比例是真正例。", {"查准率"})
    assert defines("variable: A name that refers to a value.", {"variable"})
    assert defines("Tuple: a sequence of values that cannot change.", {"tuple"})
    assert not defines("根据式 (2.9) 可算得查准率此时为正例在全体样本中的占比：", {"查准率"})
    assert not defines("因为当取到 (1, 0) 点时，此时是将所有样本均判为正例。", {"查准率"})
    assert not defines("Note: the variable holds a value.", {"variable"})


def test_a_term_named_after_also_called_or_known_as_is_defined_and_a_relative_clause_defines_nothing():
    """LilyPond's "… are called ‘Layout objects’, often known as ‘Graphical Objects’, or ‘Grobs’ for short." defines
    grobs; "All grobs have a reference point … which is used to position them" says what the point is for, and had
    led "what is a grob?"."""
    from rag.evidence import defines
    assert defines("Items of notation such as note heads and clefs are called ‘Layout objects’, often known as "
                   "‘Graphical Objects’, or ‘Grobs’ for short.", {"grob"})
    assert defines("A layout object, also called a grob, is drawn on the page.", {"grob"})
    assert defines("梯度下降也叫最速下降法，沿负梯度方向迭代。", {"最速下降法"})
    assert not defines("All grobs have a reference point defined within them which is used to position them "
                       "relative to their parent object.", {"grob"})
    assert not defines("Keith Reckdahl 的《Using Imported Graphics》（简称 epslatex）。", {"epslatex"})


def test_a_chinese_what_does_it_mean_asks_for_a_definition_and_a_clause_names_its_own_subject():
    """"这俩到底啥意思？" asks what something means, as "是什么" does; "其中的百分号意味着“任何 targets”" says what the
    percent sign means. A 是 defines the subject of its own clause: in "关于 rules 文件，你应该知道的最重要的事是，它仅仅是一种
    建议" it is 它, not rules."""
    from rag.evidence import _ASKS_DEFINITION, defines
    assert _ASKS_DEFINITION.search("debian/rules 里面就剩一个 %: 和 dh $@，这俩到底啥意思？")
    assert _ASKS_DEFINITION.search("这个选项是什么意思")
    assert defines("其中的百分号意味着“任何 targets”，它会以 target 名称作参数调用单个程序 dh。", {"百分号"})
    assert not defines("关于 dh_make 生成的 rules 文件，你应该知道的最重要的事是，它仅仅是一种建议。", {"rules"})
    assert defines("rules 文件是一种 Makefile。", {"rules"})


def test_a_latin_term_heading_a_chinese_description_is_defined_there():
    """A Chinese book's description list: "TEXMFLOCAL 系统管理员用来…的目录" defines TEXMFLOCAL (the TeX Live guide's
    comparison of TEXMFHOME and TEXMFLOCAL showed a path list instead); the term inside a sentence defines nothing."""
    from rag.evidence import defines
    assert defines("TEXMFLOCAL 系统管理员用来安装供整个系统使用的额外的或更新过的宏包、字体的目录。", {"texmflocal"})
    assert not defines("texmf-local TEXMFLOCAL 用来存放在不同版本间共享的数据。", {"texmflocal"})
    assert not defines("依次检查的路径是 $TEXMFVAR/tex 和 $TEXMFLOCAL/tex。", {"texmflocal"})
    assert not defines("TEXMFLOCAL/tex/latex 目录下", {"texmflocal"})


def test_a_comparison_side_goes_on_no_further_than_a_unit_about_another_side():
    from rag.worked import opens_with
    assert opens_with("TEXMFHOME 给用户存放它们自己独立安装的的宏包、字体等等。", ("TEXMFHOME",))
    assert opens_with("A tuple is a sequence of values that is immutable.", ("tuple",))
    assert not opens_with("Lists are more common than tuples.", ("tuple",))


def test_a_term_written_with_a_colon_on_several_lines_is_listed_not_defined():
    """Release notes write "pdfTEX: …" once a release: notes about pdfTeX, not its definition, which "什么是 pdfTeX"
    then found in them. A term glossed on one line is still defined there."""
    from rag.evidence import defines, glossed_often
    notes = ["pdfTEX: 支持 JPEG Exif 和 JFIF；", "pdfTEX: 新的原语 \\pdfmajorversion；", "LuaTEX: 现在使用的是 Lua 5.3。",
             "pdfTEX 在 ε-TEX 扩展的基础上构建，在 DVI 输出之外增加对 PDF 输出的支持。"]
    listed = glossed_often(notes, {"pdftex", "luatex"})
    assert listed == {"pdftex"}
    assert not defines(notes[0], {"pdftex"}, listed)
    assert defines(notes[2], {"luatex"}, listed)
    assert defines(notes[0], {"pdftex"})


def test_a_definition_defines_the_term_it_names_as_its_subject():
    """"A variable is a name that refers to a value" defines a variable, not a value: asked "what is a value?", the
    book's "A value is one of the basic things …" is the definition. "… is called X" / "…称为X" name X after."""
    from rag.evidence import defines
    assert defines("A value is one of the basic things a program works with.", {"value"})
    assert not defines("A variable is a name that refers to a value.", {"value"})
    assert defines("A variable is a name that refers to a value.", {"variable"})
    assert defines("A name that refers to a value is called a variable.", {"variable"})
    assert defines("学习器在训练集上的误差称为训练误差。", {"训练误差"})
    assert defines("过拟合是指学习器把训练样本自身的特点当作一般性质。", {"过拟合"})
    assert not defines("欠拟合是指学习器对训练样本的一般性质尚未学好。", {"过拟合"})
    # what a program is responsible for is what it does
    assert defines("upsd is responsible for passing data from the drivers to the client programs.", {"upsd"})
    # "by means of" is a way, not a meaning: "The indexing mechanism implemented by means of indexing expressions …"
    assert not defines("The indexing mechanism implemented by means of indexing expressions is best explained by "
                       "some examples.", {"dummy", "index"})
    assert defines("A dummy index means an auxiliary model object.", {"dummy", "index"})


@pytest.mark.parametrize("question, asks", [
    ("can someone explain what upsd actually does?", True), ("what does the driver do?", True),
    ("Kpathsea 的那个 ls-R 文件名数据库到底是干嘛用的？", True), ("What is a tuple?", True),
    ("What does it do when the list is empty?", False), ("What do you do next?", False),
    ("What example does the book use to explain tuple assignment?", False),
    ("can someone explain what a dummy index is? do i have to declare it", True), ("pls define a dummy index", True),
    ("can you show me the example?", False),
])
def test_asking_what_a_thing_does_asks_for_its_definition(question, asks):
    from rag.evidence import _ASKS_DEFINITION
    assert bool(_ASKS_DEFINITION.search(question)) is asks


MANUAL_WITH_HISTORY = """# 2 Overview

## 2.9 Network server

The server passes the data of the drivers on to the clients. It should be kept running.

# J Project history

## J.3 June 2001: common core

The server was rewritten so that it does sanity checks on the data from the drivers before it serves the client
programs, which is what the server actually does with data today.
"""


def test_a_manuals_history_of_itself_explains_nothing_as_it_is_now(settings):
    """The project history names the server and what it passed to clients in 2001; asked what the server does, the
    book's section on it answers. Asked about the history, the history still answers."""
    tool = RAGTool("learner", settings)
    tool.add_text(MANUAL_WITH_HISTORY, title="Manual", name="manual.md")
    question = "can you explain what the server does with data from the drivers and client programs?"
    evidence = tool.evidence(question, tool.retrieve(question).answering_hits, kind="explain")
    assert evidence[0].unit.text.startswith("The server passes the data"), [e.unit.text[:40] for e in evidence]
    question = "what changed in 2001 about how the server sends data to client programs?"
    evidence = tool.evidence(question, tool.retrieve(question).answering_hits, kind="explain")
    assert "was rewritten" in evidence[0].unit.text, [e.unit.text[:40] for e in evidence]


TUPLES_CHAPTER = """# Chapter 12 Tuples

## 12.1 Tuples are immutable

A tuple is a sequence of values. For example, the tuple ('Cleese', 'John') holds a last and a first name.
For example, a tuple of one element needs a final comma: ('a',) is a tuple, ('a') is a string.

## 12.2 Tuple assignment

It is often useful to swap the values of two variables. With conventional assignments you need a temporary variable.
This solution is cumbersome; tuple assignment is more elegant:

>>> a, b = b, a

## 12.3 Dictionaries and tuples

For example, the method items returns a sequence of tuples, where each tuple is a key-value pair.
"""


def test_a_section_the_question_names_holds_its_answer(settings):
    """"What example does the book use to explain tuple assignment?" points at section 12.2, whose title it says: its
    example is shown, not the sentences elsewhere that say "For example" and "tuple" more often."""
    from core.text import STOPWORDS, bm25_tokens
    from rag.evidence import names_section
    asked = [t for t in bm25_tokens("What example explains tuple assignment?") if t not in STOPWORDS]
    assert names_section(asked, ["Chapter 12 Tuples", "12.2. Tuple assignment"])
    assert not names_section(asked, ["Chapter 12 Tuples"])              # one word names a topic, not a place
    assert not names_section(asked, ["12.6 Assignment of tuples"])      # the words in another order
    tool = RAGTool("reader", settings)
    tool.add_text(TUPLES_CHAPTER, title="Think Python", name="tuples.md")
    _, answer = stream(tool, "What example does the book use to explain tuple assignment?")
    assert "a, b = b, a" in answer.text and answer.text.index("a, b = b, a") < answer.text.index("Cleese"), answer.text


def test_a_printed_result_ending_in_a_number_is_an_answer_not_a_contents_line(settings):
    """"Number of different words: 7214" ends in a number as a contents line ends in its page; after a colon the
    number is a value, and it answers "how many"."""
    tool = RAGTool("reader", settings)
    tool.add_text("# Word histogram\n\nTo count the words in the file, add up the frequencies in the histogram. "
                  "The number of different words is the number of items in the dictionary. Here is some code to "
                  "print the results, and the results:\n\nTotal number of words: 161080\n\n"
                  "Number of different words: 7214\n\n# Random words\n\nTo choose a random word from the "
                  "histogram, build a list with multiple copies of each word.", title="Emma", name="emma.md")
    _, answer = stream(tool, "How many different words are there in the histogram?")
    assert "7214" in answer.text.split("\n\n")[0], answer.text


def test_a_how_much_question_prefers_the_number_with_the_asked_unit(settings):
    tool = RAGTool("reader", settings)
    tool.add_text(PEOPLE, title="人物与湖泊", name="people.md")
    _, answer = stream(tool, "当惹雍错环湖一周有多少公里？")
    assert "250公里" in answer.text.split("\n")[0]
    from rag.evidence import asked_unit
    assert asked_unit("全长多少公里？").search("全长548公里") and not asked_unit("全长多少公里？").search("2001年")
    assert asked_unit("How many years did it last?").search("it lasted 15 years")
    assert asked_unit("What is a tuple?") is None
    by_when = asked_unit("By what date must comments reach the FAA?")      # the date after the asked preposition
    assert by_when.search("The FAA must receive comments by September 21, 2020.")
    assert not by_when.search("Service Bulletin 737-31-1860, dated June 12, 2020, identifies the airplanes.")


def test_a_word_naming_the_document_counts_less_than_the_asked_thing(settings):
    from rag.evidence import DOCUMENT_NAME_WEIGHT, discount_document_names
    tool = RAGTool("reader", settings)
    tool.add_text("# Corning annual report\n\nI have reviewed this annual report of Corning Incorporated.\n\n"
                  "Current assets exceeded current liabilities, so working capital stayed positive.",
                  title="Corning", name="Corning.md")
    tool.add_text("# Tuples\n\nA tuple is a sequence of values. Lists are mutable.", title="Think Python",
                  name="thinkpython.md")
    question = "Does Corning have positive working capital?"
    hits = tool.retrieve(question).hits
    assert discount_document_names({"corn": 2.0, "work": 1.5}, hits) == {"corn": 2.0 * DOCUMENT_NAME_WEIGHT, "work": 1.5}
    evidence = tool.evidence(question, hits)
    answer, boilerplate = evidence[0], next(e for e in evidence if "reviewed" in e.unit.text)
    assert "working capital stayed positive" in answer.unit.text
    # Every unit of the document is about Corning: the name alone leaves the certification far behind
    # (0.85 of the answer's score when the name counted in full, 0.64 now).
    assert boilerplate.score < 0.75 * answer.score


def test_a_unit_under_the_statement_the_question_names_scores_higher(settings):
    from rag.evidence import STATEMENT_BONUS
    from rag.statements import named_statements, under_statement
    assert under_statement(["CONSOLIDATED STATEMENTS OF OPERATIONS"], named_statements("the P&L statement"))
    assert not under_statement(["Off-Balance Sheet Arrangements"], named_statements("the balance sheet"))
    assert not under_statement(["Statements of Comprehensive Income"], named_statements("the income statement"))
    tool = RAGTool("reader", settings)
    tool.add_text("# Consolidated Statements of Operations\n\n| | 2019 | 2018 |\n|---|---|---|\n"
                  "| Total net revenues | 6,489 | 7,500 |", title="filing", name="filing.md")
    tool.add_text("# Outlook\n\n| | 2019 | 2018 |\n|---|---|---|\n| Total net revenues | 6,489 | 7,500 |",
                  title="outlook", name="outlook.md")
    asked = "What were total net revenues in 2019? Use the income statement."
    scores = {e.hit.doc_name: e.score for e in tool.evidence(asked, tool.retrieve(asked).hits)
              if "Total net revenues" in e.unit.text}
    # the same row, only its heading differs
    assert scores["filing.md"] >= scores["outlook.md"] + STATEMENT_BONUS - 0.04


def test_statement_names_weigh_like_a_document_name(settings):
    from rag.evidence import DOCUMENT_NAME_WEIGHT, discount_statement_names, terms_of
    income, statement, revenues = (terms_of(w)[0] for w in ("income", "statement", "revenues"))
    weights = discount_statement_names({income: 2.0, statement: 1.0, revenues: 1.5},
                                       "What were revenues on the income statement?")
    assert weights == {income: 2.0 * DOCUMENT_NAME_WEIGHT, statement: DOCUMENT_NAME_WEIGHT, revenues: 1.5}


def test_the_company_name_alone_does_not_answer_a_figure_question(settings):
    tool = RAGTool("reader", settings)
    tool.add_text("# Cover\n\nACME WATER WORKS COMPANY, INC.\n\n"
                  "# Liquidity\n\nAt the end of 2022 our current liabilities exceeded our current assets by "
                  "$1,561 million, as utilities commonly run with negative working capital.",
                  title="Acme Water Works 2022 annual report", name="ACMEWATER_2022_10K.md")
    question = "Does Acme Water Works have positive working capital based on 2022 data?"
    evidence = tool.evidence(question, tool.retrieve(question).hits)
    assert "1,561" in evidence[0].unit.text, evidence[0].unit.text
    assert not any(e.unit.text.startswith("ACME WATER WORKS") for e in evidence)   # the name alone answers nothing


def test_a_sentence_cut_by_the_chunk_overlap_is_quoted_whole(settings):
    from rag.answer import extractive_answer
    from rag.evidence import Evidence, Unit
    from rag.types import Chunk, SearchHit
    whole = "波吉亚家族的教宗亚历山大六世是第一位使用宗座华盖作为教宗世俗权力标志的教宗。"
    cut = whole[3:]                                   # the next chunk starts inside the sentence
    def evidence(n, text, score):
        chunk = Chunk(doc_id="d", chunk_id=f"c{n}", ordinal=n, text=text, heading_path=[], page_start=None,
                      page_end=None, char_start=0, char_end=len(text), token_count=len(text))
        return Evidence(n, SearchHit(chunk=chunk, doc_name="d.md", doc_title="d", score=1 / n, rank=n),
                        Unit(0, len(text), "sentence", text), score, score, None)
    answer = extractive_answer("第一位使用宗座华盖的教宗是谁？", [evidence(1, cut, 1.0), evidence(2, whole, 0.99)])
    assert answer.text.startswith(f"**{whole}**") and answer.text.count("亚历山大六世") == 1


def test_a_sentence_ending_one_chunk_is_quoted_from_the_next_where_its_passage_goes_on():
    """LilyPond's learning manual: "The version statement is important for at least two reasons." ends one chunk and
    opens the next, overlapping one, which goes on "First, it allows automatic updating …". The lead is quoted
    from where the reasons follow, whichever copy scored higher."""
    from rag.answer import extractive_answer
    from rag.evidence import Evidence, split_units
    from rag.types import Chunk, SearchHit
    lead = "The version statement is important for at least two reasons."
    first = "A version statement is a line that describes the version of LilyPond for which the file was written. " + lead
    second = lead + " First, it allows automatic updating of the input file as LilyPond syntax changes. Second, " \
        "it describes the version of LilyPond needed to compile the file."
    def evidence(ordinal, text, score):
        chunk = Chunk(doc_id="d", chunk_id=f"d:{ordinal}", ordinal=ordinal, text=text, heading_path=[],
                      page_start=None, page_end=None, char_start=0, char_end=len(text), token_count=len(text))
        unit = next(u for u in split_units(text) if u.text == lead)
        return Evidence(ordinal, SearchHit(chunk=chunk, doc_name="d.md", doc_title="d", score=score, rank=ordinal),
                        unit, score, score, None)
    answer = extractive_answer("Why does a file need a version statement?", [evidence(7, first, 1.0),
                               evidence(8, second, 0.95)], lead_sentences=2)
    assert "automatic updating" in answer.text and "needed to compile" in answer.text, answer.text
    assert answer.text.count(lead) == 1


@pytest.mark.parametrize("passage, quoted, goes_on, new_topic", [
    ("The upstream version may contain only letters, digits, plus, tilde and period. It must start with a digit. "
     "Dates are written as YYYYMMDD.", "The upstream version may contain only letters", "It must start with a digit.",
     "Dates are written"),
    ("你应该让上游版本号只包含字母和数字以及加号和点号。它必须以数字开头。日期式的版本写成 YYYYMMDD。",
     "你应该让上游版本号只包含字母和数字", "它必须以数字开头。", "日期式的版本"),
])
def test_a_quoted_sentence_keeps_the_sentence_that_goes_on_about_its_subject(passage, quoted, goes_on, new_topic):
    """"It must start with a digit" says nothing alone and is half of what the sentence before it rules: a quote
    is shown with it, as lead or as support, and with nothing that turns to another subject."""
    from rag.answer import extractive_answer
    from rag.evidence import Evidence, split_units
    from rag.types import Chunk, SearchHit
    other = "Package names are short. 软件包名很短。"
    def evidence(n, text, score):
        chunk = Chunk(doc_id="d", chunk_id=f"c{n}", ordinal=n, text=text, heading_path=[], page_start=None,
                      page_end=None, char_start=0, char_end=len(text), token_count=len(text))
        unit = split_units(text)[0]
        return Evidence(n, SearchHit(chunk=chunk, doc_name="d.md", doc_title="d", score=1 / n, rank=n),
                        unit, score, score, None)
    for order in ([evidence(1, passage, 1.0), evidence(2, other, 0.9)], [evidence(2, other, 1.0), evidence(1, passage, 0.9)]):
        answer = extractive_answer("What may an upstream version hold?", order)
        shown = next(line for line in answer.text.split("\n\n") if quoted in line)
        assert goes_on in shown and new_topic not in answer.text, answer.text
        assert goes_on in next(c.quote for c in answer.citations if quoted in c.quote)


def test_long_sentences_are_quoted_within_a_budget_the_answer_first(settings):
    from rag.answer import EXTRACTIVE_BUDGET_CHARS, extractive_answer
    from rag.evidence import Evidence, Unit
    from rag.types import Chunk, SearchHit
    filing = ["Net revenue increased by 4 percent compared with the prior fiscal year, driven by higher volumes, "
              "favourable pricing and the acquisition completed during the second quarter, partly offset by "
              "unfavourable foreign exchange movements in Europe and Latin America.",
              "Operating expenses rose because the company hired additional engineers for its cloud platform, "
              "opened two new data centres in Ireland and Singapore, and paid one-time integration costs for "
              "the businesses it bought during the year.",
              "Cash provided by operating activities was stronger owing to improved collections from large "
              "enterprise customers, lower inventory levels at distribution warehouses and the timing of "
              "income tax payments deferred from the previous period.",
              "Segment margins widened in North America thanks to a richer product mix and procurement "
              "savings, while margins in Asia narrowed as promotional spending rose ahead of the launch of "
              "the new consumer devices line."]
    # the supporting ones longer than a quote may run (QUOTE_MAX_CHARS)
    filing[1:] = [t[:-1] + ", as management explained at length in the discussion of results for the year, with "
                  "the figures for each quarter set out in the tables that follow." for t in filing[1:]]
    hits = [SearchHit(chunk=Chunk(doc_id="d", chunk_id=f"c{k}", ordinal=k, text=t, heading_path=[],
                                  page_start=k, page_end=k, char_start=0, char_end=len(t), token_count=60),
                      doc_name="10k.pdf", doc_title="10-K", score=1 / k, rank=k) for k, t in enumerate(filing, 1)]
    evidence = [Evidence(k, h, Unit(0, len(t), "sentence", t), 0.9 - 0.01 * k, 0.9, None)
                for k, (h, t) in enumerate(zip(hits, filing), 1)]
    answer = extractive_answer("How did net revenue change?", evidence)
    assert answer.text.startswith(f"**{filing[0]}**")                       # the answer itself, whole
    shown = re.sub(r"\*\*|^> |\s*\[\d+\]", "", answer.text, flags=re.MULTILINE).replace("\n\n", "")
    assert len(shown) <= EXTRACTIVE_BUDGET_CHARS and len(answer.citations) >= 2   # quotes, cut at a word
    assert " …" in answer.text


def test_a_quote_too_long_for_what_is_left_is_skipped_not_the_end_of_the_quotes(settings):
    """A long code block ranked second used to end the quotes: the short sentence after it, which held the reason
    asked for, was never shown (heldout hz-020)."""
    from rag.answer import EXTRACTIVE_BUDGET_CHARS, extractive_answer
    from rag.evidence import Evidence, Unit
    from rag.types import Chunk, SearchHit
    code = "\n".join(f"    option_{i}: int = field(default={i}, metadata={{'help': 'block length {i}'}})" for i in range(12))
    texts = [("sentence", "在预训练过程中，一般会把多个文本段拼接在一起，处理成统一长度的文本块，再对每个文本块进行训练。"),
             ("code", code),
             ("sentence", "由于预训练一般为 CLM 任务，一次性学习多个样本的序列语义不影响模型性能，且对训练效率要求比较高。")]
    assert len(code) > EXTRACTIVE_BUDGET_CHARS
    evidence = []
    for k, (kind, t) in enumerate(texts, 1):
        chunk = Chunk(doc_id="d", chunk_id=f"c{k}", ordinal=k, text=t, heading_path=[], page_start=k, page_end=k,
                      char_start=0, char_end=len(t), token_count=60)
        hit = SearchHit(chunk=chunk, doc_name="ch6.md", doc_title="第六章", score=1 / k, rank=k)
        evidence.append(Evidence(k, hit, Unit(0, len(t), kind, t), 0.9 - 0.01 * k, 0.9, None))
    answer = extractive_answer("为什么预训练时要把文本拼接成固定长度的块？", evidence)
    assert "由于预训练一般为 CLM 任务" in answer.text and "option_11" not in answer.text, answer.text


def test_a_short_composed_answer_still_gets_the_sentence_it_came_from():
    """A local model's answer that names only part of the fact ("2007年赛季") is followed by the document's
    sentence that holds the rest; a sentence the answer already says is not repeated under it."""
    from rag.answer import add_supporting_quote, citation_for
    from rag.evidence import Evidence, Unit
    from rag.types import Chunk, SearchHit
    sentence = "于乐在2007年赛季河南建业对阵大连实德的比赛中一战成名，攻入制胜球。"
    chunk = Chunk(doc_id="d", chunk_id="c1", ordinal=1, text=sentence, heading_path=[], page_start=3,
                  page_end=3, char_start=0, char_end=len(sentence), token_count=40)
    hit = SearchHit(chunk=chunk, doc_name="d.pdf", doc_title="d", score=1.0, rank=1)
    evidence = [Evidence(1, hit, Unit(0, len(sentence), "sentence", sentence), 1.0, 1.0, None)]

    short = Answer(question="于乐在哪一场比赛中一战成名？", text="2007年赛季 [1]", citations=[citation_for(1, hit)],
                   mode="llm")
    added = add_supporting_quote(short, evidence)
    assert "河南建业对阵大连实德" in added and added.strip().startswith(">") and len(short.citations) == 1

    whole = Answer(question="于乐在哪一场比赛中一战成名？", text=f"{sentence} [1]", citations=[citation_for(1, hit)],
                   mode="llm")
    assert add_supporting_quote(whole, evidence) == "" and whole.text.count("大连实德") == 1


def test_the_best_sentence_is_quoted_under_a_long_composed_answer_that_does_not_say_it():
    """A model's long answer about other passages ("~/.bashrc" for a login shell) took the whole length budget; the
    best unit ("… ~/.bash_profile, ~/.bash_login, and ~/.profile, in that order") is still quoted under it."""
    from rag.answer import EXTRACTIVE_BUDGET_CHARS, add_supporting_quote, citation_for
    from rag.evidence import Evidence, Unit
    from tests.libraries import text_hit
    sentence = ("After reading that file, it looks for ~/.bash_profile, ~/.bash_login, and ~/.profile, in that order, "
                "and reads and executes commands from the first one that exists and is readable.")
    hit = text_hit(sentence, heading=("Startup Files",), page=9, name="bash.pdf")
    evidence = [Evidence(1, hit, Unit(0, len(sentence), "sentence", sentence), 0.8, 0.8, None)]
    long = "When an interactive shell that is not a login shell is started, Bash reads ~/.bashrc. " * 8
    assert len(long) > EXTRACTIVE_BUDGET_CHARS
    answer = Answer(question="which files does bash read when i log in?", text=f"{long}[1]",
                    citations=[citation_for(1, hit)], mode="llm")
    assert "in that order" in add_supporting_quote(answer, evidence)


def test_the_next_sentence_is_quoted_under_a_long_answer_that_said_the_best_one():
    """u6e-003 ("which table drivers does glpk have …? i need to pull data out of a database"): the model's long answer
    said the best unit (the MySQL driver's package) and took the whole budget, so the next one, which lists the four
    drivers, was not shown either. The first unit the answer has not said is quoted, whatever the budget."""
    from rag.answer import EXTRACTIVE_BUDGET_CHARS, add_supporting_quote, citation_for
    from rag.evidence import Evidence, Unit
    from tests.libraries import text_hit
    best = "Under Debian GNU/Linux the MySQL table driver uses the MySQL package, which should be installed first."
    listing = "Currently the GLPK package has four table drivers: CSV, xBASE, ODBC and MySQL."
    text = f"{best} {listing}"
    hit = text_hit(text, heading=("Table drivers",), page=61, name="gmpl.pdf")
    evidence = [Evidence(1, hit, Unit(0, len(best), "sentence", best), 0.8, 0.8, None),
                Evidence(2, hit, Unit(len(best) + 1, len(text), "sentence", listing), 0.7, 0.7, None)]
    said = f"{best} [1] " + "The MySQL table driver connects to MySQL databases on Debian and Windows. [1] " * 8
    assert len(said) > EXTRACTIVE_BUDGET_CHARS
    answer = Answer(question="which table drivers does glpk have?", text=said, citations=[citation_for(1, hit)],
                    mode="llm")
    added = add_supporting_quote(answer, evidence)
    assert "four table drivers" in added and "should be installed first" not in added, added


def test_a_composed_answer_naming_part_of_a_list_is_followed_by_the_whole_list():
    """"tlmgr 都能干些啥": the model said the sentence and three of the five things the next one lists; the quote is
    still shown, with the list whole. An answer that says all five gets no quote."""
    from rag.answer import add_supporting_quote, citation_for
    from rag.evidence import Evidence, split_units
    from rag.types import Chunk, SearchHit
    items = ["列出方案，集合和安装包；", "安装、升级、备份、恢复软件包；", "查找和列出软件包以及它们的描述；",
             "列出、添加和删除不同平台的可执行文件；", "改变安装选项，比如纸张大小和源文件位置。"]
    text = "TeX Live 包含一个叫 tlmgr 的程序，它可以用来管理安装后的系统。它的功能包括：\n" + "\n".join(f"• {i}" for i in items)
    chunk = Chunk(doc_id="d", chunk_id="c1", ordinal=1, text=text, heading_path=["tlmgr"], page_start=3,
                  page_end=3, char_start=0, char_end=len(text), token_count=80)
    hit = SearchHit(chunk=chunk, doc_name="d.pdf", doc_title="d", score=1.0, rank=1)
    evidence = [Evidence(1, hit, split_units(text)[0], 1.0, 1.0, None)]
    said = "TeX Live 包含一个叫 tlmgr 的程序，它可以用来管理安装后的系统。它的功能包括：" + "".join(items[:3])
    partial = Answer(question="tlmgr 都能干些啥？", text=f"{said} [1]", citations=[citation_for(1, hit)], mode="llm")
    added = add_supporting_quote(partial, evidence)
    assert "纸张大小" in added and "不同平台的可执行文件" in added, added
    assert "纸张大小" in partial.citations[0].quote
    whole = Answer(question="tlmgr 都能干些啥？", text=f"{said}{''.join(items[3:])} [1]", citations=[citation_for(1, hit)],
                   mode="llm")
    assert add_supporting_quote(whole, evidence) == ""


def test_the_books_answer_follows_a_models_opening_with_its_citations_numbered_on():
    """Under a model's short opening, the answer in the question's shape from the book's words: its citations
    numbered after the model's (the same chunk keeps its number), code left as written (t[1] is not a
    citation), a quote the opening already says left out."""
    from rag.answer import BOOK_HEADING, add_book_answer, citation_for
    from rag.types import Chunk, SearchHit

    def hit(cid, text, page):
        chunk = Chunk(doc_id="d", chunk_id=cid, ordinal=page, text=text, heading_path=[], page_start=page,
                      page_end=page, char_start=0, char_end=len(text), token_count=20)
        return SearchHit(chunk=chunk, doc_name="tp.pdf", doc_title="tp", score=1.0, rank=1)
    tuple_hit = hit("c1", "A tuple is a sequence of values. Tuples are immutable.", 3)
    list_hit = hit("c2", "Lists are mutable.", 4)
    opening = Answer(question="list vs tuple?", text="A tuple cannot be changed, a list can [1].",
                     citations=[citation_for(1, list_hit, quote="Lists are mutable.")], mode="llm")
    book = Answer(question="list vs tuple?", mode="extractive",
                  text="**tuple**: A tuple is a sequence of values. [1]\n\n```\n>>> t[1]\n'b'\n```\n\n"
                       "**list**: Lists are mutable. [2]\n\n> A tuple cannot be changed, a list can. [2]",
                  citations=[citation_for(1, tuple_hit, quote="A tuple is a sequence of values."),
                             citation_for(2, list_hit, quote="Lists are mutable.")])
    added = add_book_answer(opening, book, zh=False)
    assert added.startswith(f"\n\n{BOOK_HEADING}\n\n**tuple**")
    assert "sequence of values. [2]" in added and "Lists are mutable. [1]" in added   # numbered on; c2 keeps 1
    assert ">>> t[1]" in added                                                          # code as written
    assert "> A tuple cannot be changed" not in added                                  # already said
    assert [(c.n, c.chunk_id) for c in opening.citations] == [(1, "c2"), (2, "c1")]
    assert opening.text.endswith(added)


# -- citations and checks -------------------------------------------------------------------------------------

def test_a_citation_cut_off_by_the_token_limit_is_left_out(llm_settings, fake_llm):
    """A model stopped inside a citation ("… keys [1") leaves no dangling "[1" in the answer nor among its
    checked sentences."""
    from rag.tool import RAGTool
    tool = RAGTool("reader", llm_settings)
    tool.add_text("# Tuples\n\nA tuple is a sequence of values. Tuples are immutable, so they can be dictionary keys.",
                  title="Tuples", name="tuples.md")
    fake_llm.answer = "Tuples are immutable, so they can be dictionary keys [1"
    answer = tool.ask("Can a tuple be a dictionary key?")
    assert answer.mode == "llm" and not re.search(r"\[\d*$", answer.text.split("\n\n")[0]), answer.text
    assert all(c.sentence.strip() != "[1" for c in answer.checks)


def test_a_sentence_cut_off_by_the_token_limit_is_left_out(llm_settings, fake_llm):
    """A model stopped by its token limit mid-list ("… keys [1]. - `tu") ends at its last finished sentence; one
    that stopped by itself keeps its last line, full stop or not (the server says which: finish_reason)."""
    from rag.tool import RAGTool
    tool = RAGTool("reader", llm_settings.model_copy(update={"llm_max_tokens": 16}))
    tool.add_text("# Tuples\n\nA tuple is a sequence of values. Tuples are immutable, so they can be dictionary keys.",
                  title="Tuples", name="tuples.md")
    fake_llm.answer = ("Tuples are immutable, so they can be dictionary keys [1]. **Difference**: - `tuple` is "
                       "immutable and a list is not, so only the tuple can be a key")
    answer = tool.ask("Can a tuple be a dictionary key?")
    opening = answer.text.split("\n\n")[0]
    assert answer.mode == "llm" and opening.endswith("dictionary keys [1]."), answer.text
    fake_llm.answer = "Tuples are immutable [1]. So they can be dictionary keys"      # 10 words: not cut
    answer = tool.ask("Can a tuple be a dictionary key?")
    assert "So they can be dictionary keys" in answer.text


def test_citation_numbers_follow_first_use_even_when_a_number_is_split_across_pieces():
    r = CitationRenumberer({1, 2, 3})
    out = "".join(r.feed(p) for p in ["Tuples are immutable [", "3]. They can be keys [1", "][3]. Bogus [9]."])
    out += r.flush()
    assert out == "Tuples are immutable [1]. They can be keys [2][1]. Bogus ."
    assert r.order == [3, 1]
    assert renumber("A [2]. B [2][1].", {1, 2}) == ("A [1]. B [1][2].", [2, 1])
    # While streaming, the numbers stay those of the passages list shown first; only bogus ones go.
    keep = CitationRenumberer({1, 2}, keep_numbers=True)
    assert keep.feed("A [2]. B [") + keep.feed("7][1].") + keep.flush() == "A [2]. B [1]."


# two sources of a composed answer: the passage each citation stands for
TWO_PASSAGES = {1: "A tuple is a sequence of values. Tuples are immutable.",
                2: "A function that calls itself is recursive."}


def _citations(passages: dict[int, str]):
    from rag.types import Citation
    return [Citation(n, "d", "d.md", None, None, f"d:{n}", 1.0, quote) for n, quote in passages.items()]


def test_a_cited_sentence_its_passage_does_not_back_is_left_out(library):
    from rag.answer import drop_unsupported
    from rag.types import Answer
    answer = Answer("q", "Tuples are immutable sequences of values [1]. Recursion was invented in 1492 by "
                         "sailors [2]. A recursive function calls itself [2]. Bogus [1002].",
                    _citations(TWO_PASSAGES), "llm")
    checks = drop_unsupported(answer, library.embedder)
    by_sentence = {c.sentence.rstrip(" ."): c for c in checks}
    assert by_sentence["Tuples are immutable sequences of values"].supported
    assert not by_sentence["Recursion was invented in 1492 by sailors"].supported
    assert answer.text == "Tuples are immutable sequences of values [1]. A recursive function calls itself [2]."
    assert [c.n for c in answer.citations] == [1, 2] and "1002" not in answer.text


def test_a_sentence_repeated_after_a_line_without_a_full_stop_is_said_once(library):
    """The 0.5B model wrote a line without a full stop and then, in a new paragraph, its first sentence again
    (u5e-021): the paragraph ends the line, and the repeat is left out."""
    from rag.answer import drop_unsupported
    from rag.types import Answer
    passage = "A tuple is a sequence of values. Tuples are immutable. Type t = (1, 2) to make one."
    answer = Answer("q", "[1] Tuples are immutable sequences of values. [1] Type t = (1, 2)\n\n"
                         "[1] Tuples are immutable sequences of values. They are made with t = (1, 2). [1]",
                    _citations({1: passage}), "llm")
    drop_unsupported(answer, library.embedder)
    assert answer.text.count("Tuples are immutable sequences of values") == 1, answer.text


def test_a_sentence_the_model_began_again_and_left_cut_is_said_once(library):
    """The 0.5B model, out of tokens, wrote its list a second time and stopped mid-way (u6z-019): the cut repeat
    says nothing the first did not, and is left out, in either language; a short sentence restating a point stays."""
    from rag.answer import drop_unsupported
    from rag.types import Answer
    passage = ("Before a central help desk opens, the schools need a service agreement, a request tracker that gives "
               "each case a number, and the same software version on every machine.")
    answer = Answer("q", "Before the help desk opens, the schools need a service agreement, a request tracker that "
                         "gives each case a number, and the same software version on every machine. [1]\n\n"
                         "- Before the help desk opens, the schools need a service agreement, a request tracker [1]",
                    _citations({1: passage}), "llm")
    drop_unsupported(answer, library.embedder)
    assert answer.text.count("service agreement") == 1 and answer.text.endswith("every machine. [1]"), answer.text
    chinese = Answer("q", "服务台开张前要准备服务协议、给每个案件编号的请求跟踪程序，以及每台机器上相同版本的软件。 [1]\n\n"
                          "服务台开张前要准备服务协议、给每个案件编号的请求跟踪程序 [1]",
                     _citations({1: "集中服务台开张前，学校需要服务协议、给每个案件编号的请求跟踪程序，以及每台机器上相同版本的软件。"}),
                     "llm")
    drop_unsupported(chinese, library.embedder)
    assert chinese.text.count("服务协议") == 1, chinese.text
    short = Answer("q", "Tuples are immutable sequences of values [1]. Tuples are immutable [1].",
                   _citations(TWO_PASSAGES), "llm")
    drop_unsupported(short, library.embedder)
    assert short.text.count("immutable") == 2, short.text


def test_a_paragraph_left_with_marks_only_goes_and_a_copied_source_label_is_not_kept(library):
    """The local model opens paragraphs with its sources' labels ("[1] … [1]", "[3] …"); a paragraph whose sentences
    were all left out leaves "[3]" alone. Neither is shown; a mark that is the paragraph's only citation stays, after
    the sentence it opens (where a citation stands), and code the model copied ("[1] 8" printed by R) is left as it is."""
    from rag.answer import drop_unsupported
    from rag.types import Answer
    passages = {**TWO_PASSAGES, 3: "The length of a vector: > length(x)\n[1] 8"}
    answer = Answer("q", "[1] Tuples are immutable sequences of values. [1]\n\n[2] Recursion was invented in 1492 "
                         "by sailors. [2]\n\n[2] A recursive function calls itself.\n\n```\n> length(x)\n[1] 8\n```",
                    _citations(passages), "llm")
    drop_unsupported(answer, library.embedder)
    paragraphs = answer.text.split("\n\n")
    assert paragraphs[0] == "Tuples are immutable sequences of values. [1]", answer.text
    assert "Recursion was invented" not in answer.text and not any(p.strip() == "[2]" for p in paragraphs)
    assert "A recursive function calls itself. [2]" in answer.text, answer.text    # its only citation, after it
    lines = Answer("q", "[1] Tuples are immutable sequences of values.\n[2] A recursive function calls itself. "
                        "It calls itself on a smaller case. [2]", _citations(TWO_PASSAGES), "llm")
    drop_unsupported(lines, library.embedder)      # the labels open lines of one paragraph (u5z-022)
    assert lines.text.startswith("Tuples are immutable sequences of values. [1]\nA recursive"), lines.text
    assert "\n[2]" not in lines.text
    assert "```\n> length(x)\n[1] 8\n```" in answer.text


def test_a_sentence_cited_by_the_wrong_number_is_cited_by_the_passage_that_says_it(library):
    """The 0.5B model wrote the pumpkin book's sentence on over- and underfitting and cited [1], the ridge-regression
    passage, where [2] says it. A sentence another given passage backs keeps its place with that passage's number;
    one no passage backs is still left out."""
    from rag.answer import drop_unsupported
    from rag.types import Answer
    passages = {1: "此式为加入了 L2 正规化项的优化目标，也叫“岭回归”，引入正规化项的目的是为了防止 w 的分量过大而导致过拟合的风险。",
                2: "过拟合是由于模型的学习能力相对于数据来说过于强大，反过来说，欠拟合是因为模型的学习能力相对于数据来说过于低下。",
                3: "A function that calls itself is recursive."}
    answer = Answer("q", "过拟合是由于模型的学习能力相对于数据来说过于强大，欠拟合是因为模型的学习能力过于低下。[1] "
                         "引入正规化项是为了防止过拟合的风险。[1]\n\nA function that calls itself is recursive [1]. "
                         "Recursion was invented in 1492 by sailors [1].", _citations(passages), "llm")
    checks = drop_unsupported(answer, library.embedder)
    quote_of = {c.n: c.quote for c in answer.citations}
    first, _, rest = answer.text.partition("\n\n")
    cited_first = [int(n) for n in re.findall(r"\[(\d)\]", first)]
    assert "过于低下。" in first and "学习能力" in quote_of[cited_first[0]], answer.text
    assert "岭回归" in quote_of[cited_first[1]]                   # rightly cited: unchanged
    assert rest.startswith("A function that calls itself is recursive. ["), answer.text
    assert "recursive" in quote_of[int(rest.split("[")[1][0])]
    assert "1492" not in answer.text
    assert [c.supported for c in checks] == [True, True, True, False]


def test_code_the_model_wrote_itself_is_left_out_and_code_it_copied_stays(library):
    """The 0.5B model answered how to span table cells with an API the book does not have ("span = Span(column=…)",
    unseen u3e-022): code cannot be checked as a sentence, so a block is shown only when its lines stand in the passages
    the model was given (white space aside), whether or not it cites the one they stand in."""
    from rag.answer import drop_unsupported
    from rag.types import Answer
    book_code = "The style command SPAN, (sc,sr), (ec,er) combines cells:\n    t.setStyle([('SPAN', (0, 0), (1, 0))])"
    invented = "```python\ntable = Table()\nfor row in table.rows:\n    span = Span(column=cell.column_index)\n```"
    copied = "```python\nt.setStyle([('SPAN', (0, 0),\n                (1, 0))])\n```"
    answer = Answer("q", f"Tuples are immutable sequences of values [1]. For example:\n\n{invented}\n\n{copied}",
                    _citations({1: TWO_PASSAGES[1]}), "llm")
    checks = drop_unsupported(answer, library.embedder, given=[TWO_PASSAGES[1], book_code])
    assert "Span(column" not in answer.text and "table.rows" not in answer.text, answer.text
    # the line that introduced the left-out code goes with it; the sentence before it stays
    assert "For example" not in answer.text and "Tuples are immutable sequences of values [1]." in answer.text
    assert "t.setStyle([('SPAN', (0, 0)," in answer.text, answer.text     # copied, its own line breaks kept
    assert any(not c.supported and "Span(column" in c.sentence for c in checks)
    # without the passages given, those it cites are where its code must stand
    answer = Answer("q", f"Tuples are immutable [1].\n\n{copied}", _citations({1: book_code}), "llm")
    drop_unsupported(answer, library.embedder)
    assert "t.setStyle" in answer.text


def test_an_uncited_sentence_no_passage_backs_is_left_out_and_its_mark_goes_with_it(library):
    """A model that cites nothing: each sentence is cited by the passage that backs it, one no passage backs is
    marked ⚠ and then left out — the ⚠ belongs to that sentence, not to the next one (it had been shown in front
    of the next, supported sentence, and the unsupported one kept)."""
    from rag.answer import Source, attribute_uncited, drop_unsupported
    from rag.types import Answer
    hits = {h.chunk.text: h for h in library.search("tuples immutable recursive function", top_k=10)}
    tuple_hit = next(h for text, h in hits.items() if "immutable" in text)
    sources = [Source(1, tuple_hit, tuple_hit.chunk.text, 0.9)]
    answer = Answer("q", "Tuples are immutable. The moon is made of green cheese and orbits Jupiter. "
                         "Tuples are immutable sequences.", [], "llm")
    attribute_uncited(answer, sources, library.embedder)
    assert "⚠" in answer.text
    drop_unsupported(answer, library.embedder)
    assert "⚠" not in answer.text and "cheese" not in answer.text, answer.text
    assert "Tuples are immutable" in answer.text


# -- the local model, for real, on a tiny context ----------------------------------------------------------------


def test_a_question_to_translate_shows_its_passages_while_the_model_answers_another(tmp_path, local_model_dir):
    """Passages never wait behind the local model: an English question about the Chinese notes must be translated
    (a model call) while another person's answer is being written; its passages come at once, with the queue's
    notice, before the model is free — then the answer follows as usual."""
    from core.settings import Settings
    s = Settings(_env_file=None, data_dir=tmp_path / "data", llm_model_dir=local_model_dir, llm_backend="local",
                 llm_temperature=0.0, llm_local_max_tokens=80)
    tool = RAGTool("reader", s)
    tool.add_text(BOOK, title="Think Python notes", name="think.md")
    tool.add_text(ZH, title="南瓜书笔记", name="pumpkin.md")
    question = "What do the pumpkin notes say about support vector machines?"
    tool.plan(question)                             # the question classifiers load once, before the clock matters
    other = tool.llm.stream([{"role": "user", "content": "Count from 1 to 60, one number per line."}], max_tokens=200)
    next(other)                                     # the model is writing someone else's answer (80 tokens, ~5 s)
    stream = tool.ask_stream(question)
    try:
        first = next(stream)
        assert isinstance(first, SourcesEvent) and first.citations and first.waiting_for, first
        assert tool.llm.waiting() >= 1              # shown while the other answer is still being written
        assert any(c.doc_name == "pumpkin.md" for c in first.citations)
    finally:
        other.close()
    rest = list(stream)
    assert isinstance(rest[-1], Answer) and not rest[-1].refused, rest[-1].text

def test_the_local_model_composes_a_cited_checked_answer_and_names_itself(tmp_path, local_model_dir):
    from core.settings import Settings
    s = Settings(_env_file=None, data_dir=tmp_path / "data", llm_model_dir=local_model_dir, llm_backend="local",
                 llm_temperature=0.0, llm_local_max_tokens=80, support_judge="none")
    tool = RAGTool("reader", s)
    tool.add_text(BOOK, title="Think Python notes", name="think.md")
    tool.add_text(ZH, title="南瓜书笔记", name="pumpkin.md")
    for question, expected in (("What is a tuple?", "sequence"), ("什么是支持向量机？", "超平面")):
        items, answer = stream(tool, question)
        assert isinstance(items[0], SourcesEvent)
        pieces = [i for i in items if isinstance(i, str)]
        assert len(pieces) > 1, "the composed answer streams"
        assert answer.mode == "llm" and answer.llm.startswith("Qwen2.5-Coder-0.5B-Instruct")
        assert expected in answer.text and answer.citations
        assert (answer.checks and all(c.cited for c in answer.checks)) or "⚠" in answer.text   # every sentence checked
        assert re.search(r"\[1\]", answer.text) or answer.citations[0].n == 1
    items, refused = stream(tool, "Who painted the Mona Lisa?")
    assert refused.refused and not [i for i in items if isinstance(i, str) and "Mona" in i]


def test_a_summary_with_the_local_model_shows_only_what_it_keeps(tmp_path, local_model_dir):
    """The local model's overview of a summary never held (its sentences cite nothing): the person saw text appear
    and vanish. The summary is the sections in the book's words, streamed exactly as it ends."""
    from core.settings import Settings
    s = Settings(_env_file=None, data_dir=tmp_path / "data", llm_model_dir=local_model_dir, llm_backend="local",
                 llm_temperature=0.0, support_judge="none")
    tool = RAGTool("reader", s)
    chapter = BOOK.replace("# Tuples", "# Chapter 1 Sequences\n\n## Tuples").replace("# Recursion", "## Recursion")
    tool.add_text(chapter, title="Think Python notes", name="think.md")
    items, answer = stream(tool, "Summarize chapter 1")
    assert answer.kind == "summarize" and not answer.refused, answer.text
    assert answer.text.startswith("**Chapter 1 Sequences**"), answer.text
    streamed = "".join(i for i in items if isinstance(i, str))
    assert " ".join(streamed.split()) == " ".join(answer.text.split())
    assert "Tuples" in answer.text and "Recursion" in answer.text and answer.citations
    assert not any("left out" in str(n) for n in answer.notices)


@pytest.mark.parametrize("worked_chars", [0, 900])
def test_the_other_case_of_a_pair_is_shown_before_the_lead_when_it_answers_nearly_as_well(worked_chars):
    """"what exit code when a command isnt found vs when it isnt executable": the best sentence is the second case;
    the one before it, scored nearly as high, is its pair and is shown first. A weaker sentence before is not, unless
    the answer is shown with its passage."""
    from rag.answer import extractive_answer
    from rag.evidence import Evidence
    from tests.libraries import text_hit
    text = ("A non-zero exit status indicates failure. If a command is not found, the child process created to "
            "execute it returns a status of 127. If a command is found but is not executable, the return status "
            "is 126.")
    hit = text_hit(text, heading=("Exit Status",), page=50, name="bash.pdf")
    failure, missing, found = split_units(text)

    def answer(pair_score: float) -> str:
        evidence = [Evidence(1, hit, found, 0.70, 0.3, 0.9), Evidence(1, hit, missing, pair_score, 0.3, 0.8),
                    Evidence(1, hit, failure, 0.2, 0.1, 0.3)]
        return extractive_answer("what exit code when a command isnt found vs isnt executable?", evidence,
                                 max_quotes=1, worked_chars=worked_chars).text

    close = answer(0.65)
    assert close.index("127") < close.index("**If a command is found"), close
    if worked_chars:       # an answer shown with its passage shows the paragraph before its lead anyway (rag.worked)
        assert "127" in answer(0.40).split("**If a command is found")[0], answer(0.40)
        return
    assert "127" not in answer(0.40).split("**If a command is found")[0], answer(0.40)

    # a sentence before it that does not open as the lead does is not its pair, however close its score
    text = text.replace("If a command is not found", "A command that is not found")
    hit = text_hit(text, heading=("Exit Status",), page=50, name="bash.pdf")
    failure, missing, found = split_units(text)
    assert "127" not in answer(0.65).split("**If a command is found")[0], answer(0.65)

