"""Answers that teach (rag.plan, rag.shapes, rag.summary, rag.compare) with the real stores and embedders.

A small generated textbook, in English and in Chinese, is loaded as Markdown (chapters and sections as
headings); no language model, so every answer is built from the book's own sentences.
"""
from __future__ import annotations

import pytest

from core.settings import Settings
from rag.compare import comparison_sides
from rag.answer import BOOK_HEADING
from rag.tool import RAGTool
from rag.types import Answer, SourcesEvent
from tests.libraries import text_library

BOOK = """# Learning Python

## Chapter 1 Values and variables

### 1.1 Values

A value is one of the basic things a program works with, like a letter or a number.
Values belong to different types: 2 is an integer, and 'Hello' is a string.

### 1.2 Variables

A variable is a name that refers to a value. An assignment statement creates a new variable and gives it a value.

### 1.3 Glossary

variable: A name that refers to a value.
assignment: A statement that assigns a value to a variable.

## Chapter 2 Lists and tuples

### 2.1 Lists

A list is a sequence of values. Unlike strings, lists are mutable: you can change their elements in place.
Lists are more common than tuples, mostly because they are mutable.

### 2.2 Tuples

A tuple is a sequence of values that is immutable. Because tuples are immutable, they can be used as dictionary keys,
which lists cannot.

### 2.3 Recursion

A function that calls itself is recursive. Every recursive function needs a base case that stops the recursion,
because without one the function calls itself forever. Here is an example of a recursive function:

```python
def countdown(n):
    if n <= 0:
        print('Blastoff!')
    else:
        countdown(n - 1)
```

## Chapter 3 Files

### 3.1 Reading files

To read a file, open it with the built-in function open and call its read method.
You can also read a file line by line with a for loop over the file object.
"""

BOOK_ZH = """# 机器学习笔记

## 第 1 章 绪论

### 1.1 基本术语

数据集中的每条记录称为一个样本。学得模型的过程称为学习或训练。

### 1.2 假设空间

假设空间是所有可能假设组成的集合。版本空间是与训练集一致的假设的集合。

## 第 2 章 模型评估

### 2.1 经验误差与过拟合

学习器在训练集上的误差称为训练误差，在新样本上的误差称为泛化误差。
过拟合是指学习器把训练样本自身的特点当作所有样本的一般性质，导致泛化性能下降。欠拟合是指学习器对训练样本的一般性质尚未学好。

### 2.2 评估方法

留出法直接将数据集划分为两个互斥的集合，一个作为训练集，另一个作为测试集。交叉验证法将数据集划分为 k 个大小相似的互斥子集。
"""


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    return text_library(tmp_path_factory.mktemp("shapes") / "data", (BOOK, "Learning Python", "learning-python.md"),
                        (BOOK_ZH, "机器学习笔记", "ml-notes.md"))


def ask(tool: RAGTool, question: str) -> tuple[list, Answer]:
    items = list(tool.ask_stream(question))
    return items, items[-1]


def test_a_named_chapter_is_summarized_section_by_section_with_its_key_terms(library):
    items, answer = ask(library, "Summarize chapter 1")
    assert answer.kind == "summarize" and not answer.refused
    text = answer.text
    assert text.startswith("**Chapter 1 Values and variables**") and "covers 2 sections" in text
    assert text.index("**Values**") < text.index("**Variables**")          # the sections in the book's order
    assert "A variable is a name that refers to a value." in text
    assert "**Key terms:** variable, assignment" in text                    # the chapter's glossary
    assert "Glossary" not in text.split("**Key terms")[0]                  # the glossary is terms, not a section
    assert isinstance(items[0], SourcesEvent) and items[0].citations == answer.citations
    assert all(f"[{c.n}]" in text for c in answer.citations)


def test_a_chapter_named_by_its_subject_or_in_chinese(library):
    _, answer = ask(library, "What does the chapter on lists and tuples cover?")
    assert answer.kind == "summarize" and "**Chapter 2 Lists and tuples**" in answer.text
    assert "**Tuples**" in answer.text and "**Recursion**" in answer.text
    _, answer = ask(library, "我想知道第二章主要讲了什么，帮我梳理一下脉络。")
    assert answer.kind == "summarize" and answer.text.startswith("**第 2 章 模型评估**")
    assert "共 2 节" in answer.text and "**经验误差与过拟合**" in answer.text


def test_a_chapter_no_document_has_is_said_in_one_sentence(library):
    _, answer = ask(library, "Summarize chapter 9")
    assert answer.refused and answer.text.startswith("Your documents have no chapter 9.")
    assert "learning-python.md has chapters 1–3" in answer.text
    _, answer = ask(library, "第九章讲了什么？")
    assert answer.refused and answer.text.startswith("你的文档中没有第九章。")


FUNCTIONS_BOOK = """# Functions

## Chapter 4 Functions

### 4.1 Defining functions

A function definition specifies the name of a new function and the statements that run when it is called.

#### 4.1.1 Parameters

Inside the function, the arguments are assigned to variables called parameters.

#### 4.1.2 Return values

A fruitful function gives back a value with the return statement.

### 4.2 The square function

$$ f(x) = x^2 $$
"""


def test_a_summary_names_each_sections_subsections_and_keeps_a_section_without_sentences(tmp_path):
    from core.settings import Settings
    tool = RAGTool("learner", Settings(_env_file=None, data_dir=tmp_path / "data", llm_backend="none"))
    tool.add_text(FUNCTIONS_BOOK, title="Functions", name="functions.md")
    _, answer = ask(tool, "Summarize chapter 4")
    assert "(sections: Parameters, Return values)" in answer.text
    assert "- **The square function**" in answer.text          # all formula: listed, nothing quoted
    assert "covers 2 sections" in answer.text


SHELL_REFERENCE = """# Shell Manual

## Chapter 7 Job Control

### 7.1 Job Control Basics

Job control refers to the ability to selectively stop the execution of processes and continue their execution at a
later point. The shell associates a job with each pipeline it runs.

### 7.2 Job Control Builtins

bg
    bg [jobspec ...]
Resume each suspended job jobspec in the background. The return status is zero unless job control is not enabled.

fg
    fg [jobspec]
Resume the job jobspec in the foreground and make it the current job.

jobs
    jobs [-lnprs] [jobspec]
The first form lists the active jobs.

disown
    disown [-ar] [-h] [jobspec ...]
Without options, remove each jobspec from the table of active jobs.
"""


def test_a_reference_section_is_summarized_with_the_names_it_has_entries_for(tmp_path):
    """The Bash manual's "Job Control Builtins": an entry per builtin, its name on a line and then its synopsis. Its
    key sentence names none of them; the summary lists them."""
    from core.settings import Settings
    from rag.summary import listed_entries
    from rag.types import Chunk
    tool = RAGTool("learner", Settings(_env_file=None, data_dir=tmp_path / "data", llm_backend="none"))
    tool.add_text(SHELL_REFERENCE, title="Shell Manual", name="shell.md")
    _, answer = ask(tool, "summarize chapter 7 for me pls")
    assert "(entries: bg, fg, jobs, disown)" in answer.text, answer.text
    # a name repeated on the next line without a synopsis (music glyphs, a word and its echo) is no entry
    chunk = Chunk(doc_id="d", chunk_id="d:1", ordinal=1, text="h\nh h\nN\nN\nverse\nverse\nto\nto",
                  heading_path=[], page_start=None, page_end=None, char_start=0, char_end=0, token_count=8)
    assert listed_entries([chunk]) == []


def test_a_chapter_named_by_a_subject_no_heading_has_is_searched_not_refused(library):
    """"The chapter on recursive functions" matches no chapter's heading (recursion is a section of chapter 2):
    the question is answered from the library, as an English question about a Chinese book's "SVM chapter"
    (支持向量机) must be. A chapter asked for by number is still one that exists or is said not to."""
    _, answer = ask(library, "In the chapter on recursive functions, why does every recursive function need a base case?")
    assert not answer.refused and "base case that stops the recursion" in answer.text


def test_a_comparison_sets_both_sides_side_by_side(library):
    _, answer = ask(library, "What is the difference between a list and a tuple?")
    assert answer.kind == "compare" and not answer.refused
    assert "**list**:" in answer.text and "**tuple**:" in answer.text
    assert "mutable" in answer.text and "immutable" in answer.text
    _, answer = ask(library, "过拟合和欠拟合有什么区别？")
    assert answer.kind == "compare" and "**过拟合**：" in answer.text and "**欠拟合**：" in answer.text


def test_a_comparison_of_three_things_sets_each_side_by_side(library):
    """"apt, apt-get and aptitude": each listed side is searched on its own and labelled with its own passage."""
    _, answer = ask(library, "What's the difference between a value, a variable and a list?")
    assert answer.kind == "compare" and not answer.refused
    assert "**value**:" in answer.text and "**variable**:" in answer.text and "**list**:" in answer.text
    assert "basic things a program works with" in answer.text and "A variable is a name" in answer.text
    assert "A list is a sequence of values" in answer.text
    _, answer = ask(library, "训练误差、泛化误差和过拟合有什么区别？")
    assert answer.kind == "compare"
    # one sentence defines both errors: it is shown once, under both names, and no side is lost
    assert "**训练误差、泛化误差**：学习器在训练集上的误差称为训练误差" in answer.text
    assert answer.text.count("在新样本上的误差称为泛化误差") == 1
    assert "**过拟合**：过拟合是指学习器把训练样本自身的特点" in answer.text


def test_what_each_of_several_things_is_is_explained_side_by_side(library):
    """"What are lists and tuples?" asks what each is: each is found on its own and shown under its name, as an
    explanation (not a comparison of how they differ)."""
    from rag.compare import asks_what_each_is
    _, answer = ask(library, "What are lists and tuples?")
    assert answer.kind == "explain" and not answer.refused, answer.kind
    assert "**lists**:" in answer.text and "**tuples**:" in answer.text, answer.text
    assert "A list is a sequence of values" in answer.text and "A tuple is a sequence of values that is immutable" \
        in answer.text
    assert asks_what_each_is("what are main, contrib and non-free in the Debian archive?")
    assert not asks_what_each_is("What is the difference between a list and a tuple?")
    assert not asks_what_each_is("What is ZeRO in DeepSpeed and how do ZeRO-1, ZeRO-2 and ZeRO-3 differ?")
    assert asks_what_each_is("history 展开里 !! 和 !$ 是啥意思？")


def test_a_side_the_passage_before_already_went_on_into_is_named_with_it_not_shown_twice():
    """Chunks overlap: the linear predictor's passage goes on into "… is called the link function", which is also
    the link function's best sentence (in the next chunk). It is shown once, under both names."""
    from rag.shapes import compare_answer
    predictor = _evidence("This linear function is called the linear predictor. The mean is a smooth invertible "
                          "function of it, and this inverse function is called the link function.", "This linear", 1)
    link = _evidence("And this inverse function is called the link function. Other families follow.", "And this", 2)
    answer = compare_answer("what are the linear predictor and the link function?", ("linear predictor", "link function"),
                            ([predictor], [link]), [], zh=False, side_chars=350)
    assert "**linear predictor, link function**: This linear function" in answer.text, answer.text
    assert answer.text.count("is called the link function") == 1, answer.text


def test_a_side_does_not_repeat_what_the_sentence_naming_both_went_on_to_say():
    """The sentence naming both sides goes on ("Lists are mutable. Tuples are immutable."); a side's best sentence is
    one of those, found in another copy of the chunk (other offsets): the side shows its next sentence instead."""
    from rag.shapes import compare_answer
    both = _evidence("Lists and tuples differ in one way. Lists are mutable. Tuples are immutable.", "Lists and", 1)
    side = "Intro words. Lists are mutable. Lists grow with append."
    lists = [_evidence(side, "Lists are", 2), _evidence(side, "Lists grow", 2)]
    answer = compare_answer("list vs tuple?", ("lists", "tuples"), (lists, []), [both], zh=False, side_chars=350)
    assert answer.text.count("Lists are mutable") == 1, answer.text
    assert "**lists**: Lists grow with append." in answer.text, answer.text


MONITOR_MANUAL = """# Chapter 2 The monitor

## 2.1 Roles

The primary and secondary roles are written in the monitor's configuration file like this:

```
MONITOR battery@host 1 user secret primary
```

References: man pages: monitor(8), monitor.conf(5), primary and secondary roles(7)

### 2.1.1 Primary

The monitored battery may power this computer, but more importantly this computer can manage the battery: it shuts
the battery down when the charge runs out. A computer plugged into the battery's serial port takes this role.

### 2.1.2 Secondary

The monitored battery may power this computer too, but this computer cannot manage the battery directly. Use this
role when you run multiple computers on the same battery; everything but the one plugged in takes it.

## 2.2 Project history

The monitor picked up the concepts of what is now known as primary and secondary in its second year, and could
pick which computers shut down first.
"""

MONITOR_MANUAL_ZH = """# 第 2 章 监控程序

## 2.1 角色

每个监控程序在配置文件中被设为两种角色之一：主机或者从机。

### 2.1.1 主机

电池可能为这台计算机供电，但更重要的是这台计算机能够管理电池：电量耗尽时由它关闭电池。接在电池串口上的计算机担任这个角色。

### 2.1.2 从机

电池也可能为这台计算机供电，但这台计算机不能直接管理电池。多台计算机共用同一块电池时，除了接上串口的那台，其余都担任这个角色。

## 2.2 历史

监控程序在第二年引入了今天所说的主机和从机的概念，并且可以挑选先关机的计算机。
"""


def test_a_comparison_side_titling_a_section_is_what_that_section_opens_with(tmp_path):
    """"primary" and "secondary" are the titles of their sections, whose openings say what each is without naming
    it ("this computer can manage the battery"); the history sentence naming both, and "pick", does not take their
    place, nor leads the answer. The same in Chinese."""
    from core.settings import Settings
    tool = RAGTool("learner", Settings(_env_file=None, data_dir=tmp_path / "data", llm_backend="none"))
    tool.add_text(MONITOR_MANUAL, title="Monitor manual", name="monitor.md")
    tool.add_text(MONITOR_MANUAL_ZH, title="监控程序手册", name="monitor-zh.md")
    _, answer = ask(tool, "whats the diffrence between primary and secondary in the monitor? which one do i pick")
    assert answer.kind == "compare" and not answer.refused
    primary, secondary = answer.text.split("**primary**:")[1].split("**secondary**:")
    assert "this computer can manage the battery" in primary, answer.text
    # what names both sides but only introduces a configuration line, points to other pages without a verb, or tells
    # the manual's own history, leads nothing
    assert "**primary**:" in answer.text.split("\n\n")[0], answer.text
    assert "cannot manage the battery directly" in secondary and "multiple computers" in secondary, answer.text
    _, answer = ask(tool, "主机和从机有啥区别？我该选哪个")
    assert answer.kind == "compare" and not answer.refused
    primary, secondary = answer.text.split("**主机**：")[1].split("**从机**：")
    assert "这台计算机能够管理电池" in primary, answer.text
    assert "不能直接管理电池" in secondary, answer.text


def test_titled_by_takes_a_heading_that_is_the_name_and_at_most_a_word_more():
    from rag.outline import OutlineNode
    from rag.scope import titled_by

    def node(title):
        return OutlineNode(title, (title,), 0, 0)
    assert titled_by("primary", node("2.10.1 Primary"))
    assert titled_by("display", node("4.8 Display statement"))
    assert titled_by("tuple", node("12.1 Tuples"))
    assert titled_by("决策树", node("4.1 决策树"))
    assert titled_by("网络安装", node("3.1 网络安装程序"))
    assert not titled_by("upsdrvctl", node("Restart upsd"))                  # a word's start is not the word
    assert not titled_by("secondary", node("J.6 Second major version"))
    assert not titled_by("display", node("4.8 Display and printf statements in a model"))
    assert not titled_by("决策树", node("4 决策树的剪枝与连续值处理"))
    assert not titled_by("tuple", node("Chapter 2 Lists and tuples"))       # the title of two things, not one
    assert not titled_by("决策树", node("决策树与随机森林"))


def test_an_example_question_shows_the_code_under_its_introduction(library):
    _, answer = ask(library, "Show me an example of a recursive function.")
    assert answer.kind == "example"
    assert "```" in answer.text and "def countdown(n):" in answer.text
    assert "Here is an example of a recursive function:" in answer.text


def test_an_explanation_goes_on_after_its_first_sentence(library):
    _, answer = ask(library, "Why does every recursive function need a base case?")
    assert answer.kind == "why"
    assert "because without one the function calls itself forever" in answer.text


@pytest.mark.parametrize("question, sides", [
    ("What is the difference between a list and a tuple, and when should I use a tuple?", ("list", "tuple")),
    ("How is a tuple different from a list?", ("tuple", "list")),
    ("Compare bagging and boosting.", ("bagging", "boosting")),
    ("Lists vs dictionaries: when should I use which?", ("Lists", "dictionaries")),
    ("Is a method the same as a function?", ("method", "function")),
    ("What's the difference between bagging and random forests in the pumpkin book?", ("bagging", "random forests")),
    ("How does DPO differ from RLHF with PPO, according to Happy-LLM?", ("DPO", "RLHF with PPO")),
    ("列表和元组有什么区别？", ("列表", "元组")),
    ("比较一下 Bagging 和 Boosting。", ("Bagging", "Boosting")),
    ("牛顿法和梯度下降法相比有什么优缺点？", ("牛顿法", "梯度下降法")),
    ("Think Python 里元组和列表有什么区别？什么时候该用元组？", ("元组", "列表")),
    ("训练误差和泛化误差一样吗？", ("训练误差", "泛化误差")),
    ("机器学习笔记中“算法”和“模型”有什么区别？", ("算法", "模型")),          # quoted sides, a book named before
    ("南瓜书中过拟合和欠拟合有什么区别？", ("过拟合", "欠拟合")),
    ("What is the difference between an 'algorithm' and a 'model'?", ("algorithm", "model")),
    # three or more sides, listed
    ("what's the difference between apt, apt-get and aptitude?", ("apt", "apt-get", "aptitude")),
    ("Compare lists, tuples, and dictionaries.", ("lists", "tuples", "dictionaries")),
    ("apt、apt-get 和 aptitude 有什么区别？", ("apt", "apt-get", "aptitude")),
    ("比较一下列表、元组和字典", ("列表", "元组", "字典")),
    ("What is the difference between a list and a tuple, and when should I use a tuple?", ("list", "tuple")),
    # colloquial Chinese: 有啥区别, the two named and then "区别到底是啥", sides written as syntax
    ("列表和元组有啥区别？", ("列表", "元组")),
    ("路径和路向老是搞混，区别到底是啥", ("路径", "路向")),
    ("${var:-默认值} 跟 ${var:=默认值} 有什么区别？", ("${var:-默认值}", "${var:=默认值}")),
    # values of one field keep the field's name; a bare 啥 before 区别 is not part of a side
    ("Architecture: any 和 all 啥区别，我打包的是个 shell 脚本该填哪个", ("Architecture: any", "Architecture: all")),
    ("Priority: optional vs extra?", ("Priority: optional", "Priority: extra")),
    ("difference between := and default when i declare a param?", (":=", "default")),
    ("union vs diff vs symdiff vs inter vs cross?? esp what dimension does cross give u",
     ("union", "diff", "symdiff", "inter", "cross")),
    # an adverb before 有啥区别 is no part of a side; a list with no 和; "比一比"; a gloss in brackets is not a name
    ("列表和元组到底有啥区别", ("列表", "元组")),
    ("列表和元组究竟有什么不同？", ("列表", "元组")),
    ("胖客户端、瘦客户端、无盘工作站到底有啥区别？晕了", ("胖客户端", "瘦客户端", "无盘工作站")),
    ("apt、apt-get 和 aptitude 到底用哪个？三者区别在哪", ("apt", "apt-get", "aptitude")),
    ("列表和元组我该选哪个？", ("列表", "元组")),
    ("PAM 和 NSS 分别是干嘛的？老是分不清", ("PAM", "NSS")),
    ("梯度下降和牛顿法各自的优缺点", ("梯度下降", "牛顿法")),
    ("选项1和选项2（全员笔记本）比一比，成本差多少", ("选项1", "选项2")),
    ("difference between print() and return (the keyword)?", ("print()", "return")),
    ("f(x) vs g(x)?", ("f(x)", "g(x)")),
    # a misspelt "difference"; where the sides are compared is not part of the last; what leads into a side is not
    # its name; a list whose kind is named before the ask ("这几个引擎"), "不一样"
    ("whats the diffrence between primary and secondary in upsmon? which one do i pick", ("primary", "secondary")),
    ("whats the difference between a scheme and a collection in the tex live installer?", ("scheme", "collection")),
    ("for notifications should i write my own NOTIFYCMD script or use upssched? whats the difference",
     ("NOTIFYCMD script", "upssched")),
    ("pdfTeX、LuaTeX、XeTeX 这几个引擎到底有啥不一样？晕了", ("pdfTeX", "LuaTeX", "XeTeX")),
    ("列表和元组哪里不一样", ("列表", "元组")),
    # a verb of choosing leads into a side only when the question asks which to choose
    ("What is the difference between use case and user story?", ("use case", "user story")),
    # how to choose among them, their relation, what they are called as a group (这三个摘录环境), a clause saying
    # what they are compared in (对 … 的处理, 在 … 上) or how they seem alike (都能换行) before the ask
    ("METAPOST、PSTricks 和 PGF 这三个画图工具该怎么选？各有啥优缺点", ("METAPOST", "PSTricks", "PGF")),
    ("quote、quotation、verse 这三个摘录环境有啥区别", ("quote", "quotation", "verse")),
    ("dpkg-buildpackage、pbuilder、pdebuild 这几个到底啥关系，晕了", ("dpkg-buildpackage", "pbuilder", "pdebuild")),
    ("RoBERTa 和 ALBERT 对 NSP 任务的处理有什么不同？", ("RoBERTa", "ALBERT")),
    ("pdflatex 跟 latex+dvips 这几条路线，在插图格式支持上有什么不一样", ("pdflatex", "latex+dvips")),
    ("原问题和对偶问题有什么区别", ("原问题", "对偶问题")),         # 对 inside a side is no "compared in"
    ("\\newline 和 \\linebreak 都能换行，到底区别在哪", ("\\newline", "\\linebreak")),
    ("帮我理清一下 Platypus 里 DocTemplate、PageTemplate 和 Frame 之间是什么关系", ("DocTemplate", "PageTemplate", "Frame")),
    # what a side is said of, when the other side is shaped like the rest of it, is where both are compared
    ("给老师配电脑的选项1和选项2比一比", ("选项1", "选项2")),
    ("快速排序的时间复杂度和归并排序有什么区别", ("快速排序的时间复杂度", "归并排序")),
    # English: how they seem alike, a side of one symbol, what a side is used for
    ("ties and slurs look the same to me, what's the actual difference in lilypond?", ("ties", "slurs")),
    ("& vs && in an if() condition, which one should I use?", ("&", "&&")),
    ("whats the diffrence between Lst[[1]] and Lst[1] for a list", ("Lst[[1]]", "Lst[1]")),
    # "one" stands for the first side's noun
    ("How is the new MCAS design different from the original one?", ("new MCAS design", "original MCAS design")),
    ("What is the difference between the old API and the new one?", ("old API", "new API")),
    ("What is the difference between a list and the other one?", ("list", "other one")),   # no noun to name it by
    # what each of several things is
    ("what are contexts and engravers? the manual keeps talking about them", ("contexts", "engravers")),
    ("what are main, contrib and non-free in the Debian archive?", ("main", "contrib", "non-free")),
    ("What do !! and !$ mean in history expansion?", ("!!", "!$")),
    ("history 展开里 !! 和 !$ 是啥意思？怎么快速改掉错字", ("!!", "!$")),
])
def test_the_sides_of_a_comparison(question, sides):
    assert comparison_sides(question) == sides


@pytest.mark.parametrize("question, context", [
    # each side is searched where the question is: "What is := (declare param)?" finds the assign attribute
    ("difference between := and default when i declare a param? they look the same to me", ["declare", "param"]),
    ("display vs printf, whats the diffrence? i want my results in a file not the terminal",
     ["results", "file", "terminal"]),
    ("Nittedal 那个计划里，给老师配电脑的选项1和选项2比一比，成本差多少", ["nittedal", "成本", "老师", "电脑"]),
    # what cleaning took off a side says where it is compared
    ("whats the difference between a scheme and a collection in the tex live installer?", ["installer"]),
    ("for notifications should i write my own NOTIFYCMD script or use upssched? whats the difference",
     ["notifications"]),
    # the words of choosing are not where the sides are ("pick" found the book's history of how the tool "picked up")
    ("whats the diffrence between primary and secondary in upsmon? which one do i pick for my home pc", ["upsmon"]),
    # nothing beside the sides: each is asked alone, as before
    ("What is the difference between a list and a tuple?", []),
    ("胖客户端、瘦客户端、无盘工作站到底有啥区别？晕了", []),
    # nor how the learner feels about them, nor how they ask
    ("PAM 和 NSS 分别是干嘛的？老是分不清", []),
    ("METAPOST、PSTricks 和 PGF 这三个画图工具该怎么选？各有啥优缺点", []),
    ("frame 和 picture 老是搞混，区别到底是啥", []),
    # what they are compared in, said between the sides and the ask; what a side was said of
    ("pdflatex 跟 latex+dvips 这几条路线，在插图格式支持上有什么不一样", ["插图", "格式"]),
    ("给老师配电脑的选项1和选项2比一比", ["老师", "电脑"]),
])
def test_the_words_a_comparison_is_made_in(question, context):
    from rag.compare import side_context
    assert side_context(question) == context


@pytest.mark.parametrize("question", ["What is a tuple?", "How do I read a file?", "为什么要用验证集？",
                                      # a value each has is looked up, not compared
                                      "https、imaps 和 pop3s 这几个加密服务分别用哪个端口来着",
                                      "METAPOST 和 PSTrick 默认的长度单位分别是啥？默认线宽又是多少",
                                      # one thing used instead of another is asked about the one: its passage
                                      # on when to use it ("list comprehensions are harder to debug") answers
                                      "When should I use a list comprehension instead of a normal for loop?",
                                      # one thing and a second ask about it; sides of one thing
                                      "What is Bagging and how does it work?", "What are the pros and cons of recursion?",
                                      # values asked of each are looked up; a relation only when asked
                                      "画笔默认线宽是多少？默认的线端和连接样式又是啥",
                                      "法案通过后，每年大约有多少对同性恋人登记成为公民伴侣关系？",
                                      "how do i use a truetype font (ttf) instead of helvetica?"])
def test_no_sides_when_nothing_is_compared(question):
    assert comparison_sides(question) is None


def test_a_comparison_side_is_named_only_where_its_words_are_written():
    """An English side inside a Chinese sentence is named there; a unit in another language that does not
    write the side names it not (an English code line led a comparison of two Chinese terms)."""
    from rag.tool import _mentions
    assert _mentions("Layer Norm 的归一化方式其实和 Batch Norm 是完全一样的。", "Layer Norm")
    assert _mentions("过拟合是指学习器把训练样本自身的特点当作一般性质。", "过拟合")
    assert not _mentions("def countdown(n): print('Blastoff!')", "过拟合")
    assert not _mentions("欠拟合是指学习器对训练样本的一般性质尚未学好。", "过拟合")
    # sides told apart only by a stopword are named by every word, "all" too; others by their content words
    assert _mentions("• Architecture: all – 独立于体系结构。", "Architecture: all", every_word=True)
    assert not _mentions("• Architecture: any – 依赖于具体的体系结构。", "Architecture: all", every_word=True)
    assert _mentions("The + operator makes a new list.", "+ operator on lists")
    # a Chinese side is named whatever spaces the book puts in it ("选项 1" for the learner's 选项1)
    assert _mentions("选项 1：瘦客户端与便携机的组合。", "选项1") and not _mentions("选项 2：便携机。", "选项1")


def two_books(settings, zh_book: str = BOOK_ZH, zh_title: str = "机器学习笔记", zh_name: str = "ml-notes.md") -> RAGTool:
    """A library of the English textbook and a Chinese one."""
    tool = RAGTool("learner", settings)
    tool.add_text(BOOK, title="Learning Python", name="learning-python.md")
    tool.add_text(zh_book, title=zh_title, name=zh_name)
    return tool


ALGORITHM_ZH = """# 机器学习笔记

## 第 1 章 绪论

### 1.1 基本术语

K-SVD is an algorithm that updates the dictionary one column at a time. 这段英文引自原论文。

“算法”是指从数据中学得“模型”的具体方法，“算法”产出的结果称为“模型”，通常是具体的函数或可抽象地看作函数。

### 1.2 数据与模型

数据决定模型效果的上限，通常数据量越大模型效果越好。

### 1.3 算法

常见的算法有线性回归、决策树和支持向量机等。
"""


def test_an_english_comparison_shows_first_the_chinese_sentence_naming_both_sides(llm_settings, fake_llm):
    """"the difference between an 'algorithm' and a 'model'" of a Chinese book: the sentence that names both (算法,
    模型: the translated sides) leads the book's answer, not an English quote that only says "algorithm"."""
    tool = two_books(llm_settings, ALGORITHM_ZH)
    fake_llm.translation = "机器学习笔记中“算法”和“模型”有什么区别？"
    fake_llm.answer = "An algorithm is the method; the model is what it produces [1]."
    answer = tool.ask("What does ml-notes say is the difference between an 'algorithm' and a 'model'?")
    assert not answer.refused, answer.text
    book = answer.text.split("**From the book**")[-1].strip()
    assert book.startswith("**“算法”是指从数据中学得“模型”的具体方法"), answer.text


def translation_asked(fake_llm) -> bool:
    """Whether the model was asked to translate a question since the server's requests were last cleared."""
    return any(r["body"]["messages"][0]["content"].startswith("Translate the user's question")
               for r in fake_llm.requests if "messages" in r["body"])


def test_an_english_comparison_about_a_chinese_book_finds_each_side_in_chinese(llm_settings, fake_llm):
    """With a model, a comparison asked in English of a Chinese book named in it has each side looked for as the
    translated question names it (过拟合, 欠拟合) in that book, and the book's two sides are shown in Chinese, each
    cited. (Whether the model's English opening is kept is the support check's call: across languages it reads
    closeness alone, see rag.support.)"""
    tool = two_books(llm_settings)
    fake_llm.translation = "机器学习笔记中过拟合和欠拟合有什么区别？"
    fake_llm.answer = ("Overfitting is when the learner takes the training samples' own traits as general properties "
                       "of all samples, so generalization performance drops [1].")
    answer = tool.ask("What is the difference between overfitting and underfitting in ml-notes?")
    assert answer.kind == "compare" and not answer.refused
    assert "过拟合是指学习器把训练样本自身的特点当作所有样本的一般性质" in answer.text and "欠拟合是指" in answer.text
    assert "**overfitting**" in answer.text and "**underfitting**" in answer.text
    assert all(c.doc_name == "ml-notes.md" for c in answer.citations)


DECISION_TREES_ZH = """# 决策树笔记

## 第 4 章 决策树

### 4.1 递归划分

决策树的生成是一个递归过程：递归划分数据集，直到递归返回。递归返回有三种情形，每种递归返回都结束一次递归。
"""


def test_an_english_question_in_a_library_of_both_languages_is_answered_from_the_english_book(llm_settings, fake_llm):
    """A library holding an English and a Chinese book: "What is recursion?" is answered from the English book,
    which answers it, and the model is not asked for a translation. Translated, it would be judged against the
    Chinese book's 递归, where every character matches, and that judgement outscores the English one."""
    tool = two_books(llm_settings, DECISION_TREES_ZH, "决策树笔记", "decision-trees.md")
    fake_llm.translation = "什么是递归？"
    fake_llm.answer = "A recursive function calls itself and needs a base case that stops the recursion [1]."
    answer = tool.ask("What is recursion?")
    assert not answer.refused and answer.citations
    assert {c.doc_name for c in answer.citations} == {"learning-python.md"}, answer.text
    assert not translation_asked(fake_llm)
    # the same library, a question only the Chinese book answers: translated, and answered from it
    fake_llm.requests.clear()
    fake_llm.translation = "什么是递归返回？"
    answer = tool.ask("How does a decision tree split its data set?")
    assert translation_asked(fake_llm)
    assert not answer.refused and "decision-trees.md" in {c.doc_name for c in answer.citations}, answer.text


def test_a_question_seeming_to_name_a_book_of_its_own_language_is_still_asked_of_the_other(llm_settings, fake_llm):
    """"…in the machine learning notes?" names "Learning Python" by a shared word; that book does not answer it, so
    the question is translated and answered from the Chinese notes, the English opening with the Chinese quote."""
    tool = two_books(llm_settings)
    fake_llm.translation = "什么是过拟合？"
    fake_llm.answer = ("Overfitting means the learner takes the training samples' own traits as general properties, "
                       "so generalization suffers [1].")
    fake_llm.judgement = 0.95
    answer = tool.ask("What does overfitting mean in the machine learning notes?")
    assert not answer.refused and answer.text.startswith("Overfitting means"), answer.text
    assert "过拟合是指学习器把训练样本自身的特点当作所有样本的一般性质" in answer.text


def almanac(sections: int = 110) -> str:
    """A long English text of distinct sections, one passage each: the unknown-word rule judges a library of 100+
    passages only."""
    things = ["apples", "pears", "plums", "cherries", "quinces", "medlars", "figs", "grapes", "walnuts", "hazels", "melons"]
    months = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October"]
    sides = ["north", "south", "east", "west"]

    def note(n: int) -> str:
        thing, month, side = things[n % 11], months[n % 10], sides[n % 4]
        return (f"## Note {n}: {thing} in {month}\n\n"
                + " ".join(f"In week {w} of {month} the {thing} of bed {n} want {(n + w) % 7 + 1} buckets of water, "
                           f"a mulch of {things[(n + w) % 11]} leaves and a look at the {side} wall." for w in range(1, 6)))
    return "# Garden almanac\n\n" + "\n\n".join(note(n) for n in range(sections))


def test_an_english_word_the_chinese_book_holds_translated_is_searched_and_not_unknown(llm_settings, fake_llm):
    """A small model keeps a term in English when it translates the question ("overfitting 是什么意思？"): that word
    is then asked of the model alone, and its Chinese (过拟合), held by the Chinese book, is searched in its place.
    The question is answered from the book, not refused for a word "your documents never mention"."""
    tool = two_books(llm_settings)
    tool.add_text(almanac(), title="Garden almanac", name="almanac.md")
    fake_llm.translation = "overfitting 是什么意思？"
    fake_llm.terms = {"overfitting": "过拟合"}
    fake_llm.answer = "过拟合是指学习器把训练样本自身的特点当作所有样本的一般性质 [1]。"
    fake_llm.judgement = 0.95
    answer = tool.ask("What does overfitting mean?")
    assert translation_asked(fake_llm)
    assert not answer.refused and "never mention" not in answer.text, answer.text
    assert "ml-notes.md" in {c.doc_name for c in answer.citations}


def test_a_word_whose_translation_no_book_holds_stays_unknown(llm_settings, fake_llm):
    """The dictionary's answer counts only when the library holds it: "photosynthesis" (光合作用) is in no book, and
    the question is declined naming the word."""
    tool = two_books(llm_settings)
    tool.add_text(almanac(), title="Garden almanac", name="almanac.md")
    fake_llm.translation = "photosynthesis 是什么意思？"
    fake_llm.terms = {"photosynthesis": "光合作用"}
    answer = tool.ask("What does photosynthesis mean?")
    assert answer.refused and "photosynthesis" in answer.text, answer.text


def test_a_chinese_question_quoting_an_english_books_words_is_also_searched_in_english(llm_settings, fake_llm):
    """"…为什么 tuples 可以用作 dictionary keys？" quotes the English book's words: it is about that book though it names
    none, and it is searched in English too."""
    tool = two_books(llm_settings)
    fake_llm.translation = "Why can tuples be used as dictionary keys?"
    fake_llm.answer = "Because tuples are immutable, they can be used as dictionary keys [1]."
    answer = tool.ask("为什么 tuples 可以用作 dictionary keys？")
    assert translation_asked(fake_llm)
    assert not answer.refused and "learning-python.md" in {c.doc_name for c in answer.citations}, answer.text


def test_a_chapter_named_by_its_subject_in_the_other_language_is_summarized(llm_settings, fake_llm):
    """"the notes' chapter on model evaluation" of a Chinese book: the subject is translated (模型评估) and matched
    to the heading 第 2 章 模型评估 by its words, and that chapter is summarized, not refused or searched for."""
    tool = two_books(llm_settings)
    fake_llm.terms = {"model evaluation": "模型评估"}
    fake_llm.answer = "This chapter covers training error, overfitting and how to hold out a test set [1]."
    answer = tool.ask("Summarize the machine learning notes' chapter on model evaluation")
    assert answer.kind == "summarize" and not answer.refused, answer.text
    assert "经验误差与过拟合" in answer.text and "评估方法" in answer.text, answer.text
    assert all(c.doc_name == "ml-notes.md" for c in answer.citations)


def test_a_subject_in_the_same_script_as_the_headings_is_not_sent_across():
    from rag.outline import OutlineNode
    from rag.scope import in_other_script
    chinese = [OutlineNode("第 1 章 绪论", ("第 1 章 绪论",), 0, 0), OutlineNode("第 2 章 模型评估", ("第 2 章 模型评估",), 1, 1)]
    assert in_other_script("model evaluation", chinese) and not in_other_script("模型评估", chinese)
    english = [OutlineNode("Chapter 3 Files", ("Chapter 3 Files",), 0, 0)]
    assert in_other_script("文件", english) and not in_other_script("files", english)


ENSEMBLES_ZH = """# 集成学习笔记

## 第 8 章 集成学习

Bagging 是并行式集成学习方法的代表，基学习器可以并行生成。Boosting 是一族可将弱学习器提升为强学习器的算法，
基学习器串行生成。
"""


def test_a_chinese_question_quoting_words_its_own_book_uses_is_not_translated(llm_settings, fake_llm):
    """"Bagging 和 Boosting 有什么区别？" quotes English words the Chinese book itself uses: it is about that book,
    and no model call goes to translating it."""
    tool = two_books(llm_settings, ENSEMBLES_ZH, "集成学习笔记", "ensembles.md")
    fake_llm.translation = "What is the difference between Bagging and Boosting?"
    fake_llm.answer = "Bagging 的基学习器可以并行生成，Boosting 的基学习器串行生成 [1]。"
    answer = tool.ask("Bagging 和 Boosting 有什么区别？")
    assert not translation_asked(fake_llm)
    assert not answer.refused and {c.doc_name for c in answer.citations} == {"ensembles.md"}, answer.text


def test_an_answer_in_the_books_language_gets_its_first_passage_translated_when_the_model_says_nothing_that_holds(
        llm_settings, fake_llm):
    """An English question answered from a Chinese book whose model opening is all left out: the first passage is
    shown translated, marked as a translation of [1], above the book's words; a translation that says what the
    passage does not (a number it never gives) is not shown, and the book's words answer alone."""
    tool = two_books(llm_settings)
    fake_llm.translation = "机器学习笔记中过拟合是什么意思？"
    fake_llm.answer = "Overfitting only happens with fewer than 12 samples [1]."        # no passage says 12
    fake_llm.quote_translation = ("Overfitting is when the learner takes the training samples' own traits as "
                                  "general properties of all samples, so generalization performance drops. "
                                  "Underfitting is when the learner has not yet learned the general properties of "
                                  "the training samples.")
    answer = tool.ask("What does overfitting mean in the machine learning notes?")
    assert not answer.refused and answer.text.startswith("*Translated from [1]:* Overfitting is when"), answer.text
    assert "**From the book**" in answer.text and "过拟合是指学习器把训练样本自身的特点" in answer.text
    assert "12 samples" not in answer.text and answer.citations[0].doc_name == "ml-notes.md"
    assert any("shown translated by the model" in str(n) for n in answer.notices), answer.notices
    asked = [r["body"]["messages"] for r in fake_llm.requests if "messages" in r["body"]
             and r["body"]["messages"][0]["content"].startswith("Translate the user's text")]
    assert asked and "过拟合是指" in asked[-1][-1]["content"] and "**" not in asked[-1][-1]["content"]

    fake_llm.quote_translation = "Overfitting is when a model has more than 100 parameters."
    answer = tool.ask("What does overfitting mean in the machine learning notes, in short?")
    assert not answer.refused and "Translated from" not in answer.text and "100" not in answer.text, answer.text
    assert not any("translated" in str(n) for n in answer.notices), answer.notices
    assert "过拟合是指" in answer.text


def test_a_model_answer_in_the_books_language_gets_its_first_paragraph_translated_for_the_reader(
        llm_settings, fake_llm):
    """A Chinese question about an English book that the model answers in the book's English (its sentences hold):
    the reader gets its first paragraph in Chinese, marked as a translation, above the model's sentences; a
    translation that adds a number is not shown. A Chinese answer to the same question is left as it is."""
    tool = two_books(llm_settings)
    fake_llm.translation = "What is a tuple in Learning Python?"
    fake_llm.answer = "Tuples can be used as dictionary keys [1]."
    fake_llm.quote_translation = "元组可以用作字典的键。"
    answer = tool.ask("Learning Python 里的 tuple 有什么用？")
    assert not answer.refused and answer.text.startswith("*译自 [1]*：元组可以用作字典的键。 [1]"), answer.text
    assert "Tuples can be used as dictionary keys" in answer.text
    assert "**书中原文**" not in answer.text.split("Tuples can be used")[0]   # the model's words, not the book's

    fake_llm.quote_translation = "元组可以用作 3 个字典的键。"
    answer = tool.ask("Learning Python 里的 tuple 能用来干什么？")
    assert not answer.refused and "译自" not in answer.text and "3 个" not in answer.text, answer.text

    fake_llm.answer = "元组（tuple）可以用作字典的键 [1]。"
    fake_llm.quote_translation = "不该被问到。"
    answer = tool.ask("Learning Python 里的 tuple 可以做什么？")
    assert "译自" not in answer.text and "不该被问到" not in answer.text, answer.text


def test_the_lead_to_translate_is_the_first_cited_paragraph_in_whole_sentences():
    from rag.translated_lead import MAX_LEAD_CHARS, lead_to_translate, needs_translation
    text = "**过拟合是指学习器把训练样本自身的特点当作一般性质。** [2]\n\n> 欠拟合是指尚未学好。 [3]"
    assert lead_to_translate(text) == ("过拟合是指学习器把训练样本自身的特点当作一般性质。", 2)
    long = " ".join(f"Sentence {i} says something long enough to count here." for i in range(20)) + " [1]"
    lead, n = lead_to_translate(long)
    assert n == 1 and len(lead) <= MAX_LEAD_CHARS and lead.endswith("here.")
    assert lead_to_translate("```\nprint(1)\n``` [1]") is None and lead_to_translate("no citation here") is None
    assert needs_translation("What is overfitting?", text) and not needs_translation("什么是过拟合？", text)


def test_a_chapter_without_sections_is_summarized_page_run_by_page_run(tmp_path):
    """A six-page tutorial chapter with no sections of its own: its summary reads its pages in order, a few at a
    time, not only the sentences of its first page (a PDF's chapters come from its bookmarks)."""
    from core.settings import Settings
    from tests.test_convert import body, make_pdf, write
    topics = ["running the program interactively", "setting the size of a picture", "labels and their alignment",
              "cubic splines through given points", "the tension of a curve", "filling a ring with evenodd"]
    pages = [body(["Chapter 1 Basics", "The basics chapter says what a picture is and how it is drawn."])]
    for topic in topics:
        pages.append(body([f"This page of the tutorial teaches {topic}.",
                           f"A learner who reads it can use {topic} in a drawing of their own."]))
    pages.append(body(["Chapter 3 Commands", "The commands chapter lists the four drawing commands."]))
    outline = [("Chapter 1 Basics", 0, []), ("Chapter 2 Tutorial", 1, []), ("Chapter 3 Commands", 7, [])]
    path = write(tmp_path, "tutorial.pdf", make_pdf(pages, outline=outline))
    tool = RAGTool("learner", Settings(_env_file=None, data_dir=tmp_path / "data", llm_backend="none"))
    tool.add_document(path)
    _, answer = ask(tool, "Summarize chapter 2")
    assert answer.kind == "summarize" and not answer.refused
    assert "sections" not in answer.text.split("\n")[0]          # page runs are not sections
    said = [topic for topic in topics if topic in answer.text]
    assert topics[0] in said and topics[-1] in said and len(said) >= 4, answer.text
    assert answer.text.index(topics[0]) < answer.text.index(topics[-1])    # in the book's order


def test_a_run_of_pages_names_the_commands_it_goes_on_to_teach_not_ordinary_words(tmp_path):
    """A manual's chapter without sections, read page run by page run: a run's summary line also names the words
    it uses far more than the other runs (the commands it introduces)."""
    from core.settings import Settings
    from tests.test_convert import body, make_pdf, write
    pages = [body(["Chapter 1 Plotting", "The plotting chapter says how a graph is drawn on the screen."])]
    for n in range(6):
        extra = ["The rectwindow is a virtual rectangle that holds one drawing.",
                 "Each rectwindow is drawn by plotdraw, which takes a list of rectwindow numbers.",
                 "A rectwindow keeps its initial size, and the initial size is the initial screen size."] \
            if n in (3, 4) else [f"Page {n} of the tutorial shows a plain graph of a sine function."]
        pages.append(body([f"This page of the chapter draws curve number {n} on the screen.", *extra]))
    pages.append(body(["Chapter 2 Numbers", "The numbers chapter lists the number types."]))
    outline = [("Chapter 1 Plotting", 0, []), ("Chapter 2 Numbers", 7, [])]
    path = write(tmp_path, "manual.pdf", make_pdf(pages, outline=outline))
    tool = RAGTool("learner", Settings(_env_file=None, data_dir=tmp_path / "data", llm_backend="none"))
    tool.add_document(path)
    _, answer = ask(tool, "Summarize chapter 1")
    assert answer.kind == "summarize" and not answer.refused
    lines = [line for line in answer.text.splitlines() if line.startswith("- ")]
    assert any("rectwindow" in line for line in lines), answer.text



_OTHER_SECTIONS = [("Clip", "The clip command cuts a picture to the inside of a path."),
                   ("Erase", "The erase command clears a picture of everything drawn on it."),
                   ("Layer", "The layer command starts a new layer above the ones before."),
                   ("Shipout", "The shipout command writes a picture to its output file."),
                   ("Size", "The size command sets the width and height of the final picture."),
                   ("Unitsize", "The unitsize command sets how long one user unit is.")]
_OTHER_SECTIONS_ZH = [("剪裁", "剪裁命令把图裁到一条路径的内部。"), ("擦除", "擦除命令清空图上画过的一切。"),
                      ("图层", "图层命令在之前的图层之上开始一个新图层。"), ("输出", "输出命令把图写到输出文件。"),
                      ("尺寸", "尺寸命令设定最终图的宽度和高度。"), ("单位", "单位命令设定一个用户单位有多长。")]

DRAWING_BOOK = """# Drawing

## Chapter 4 Drawing commands

### 4.1 Draw

The draw command strokes a path with a pen, and the path is its only required argument.
Arrowheads are added with the arrow argument. An arrowhead can sit at the start, the middle or the end.
The size of an arrowhead follows the pen's width. Two arrowheads are made with Arrows.

### 4.2 Fill

The fill command paints the inside of a cyclic path, so the path must be closed.
A gradient shades the region from one pen to another. An axial gradient runs along a segment.
A radial gradient runs between two circles. The gradient examples live in shade.asy.

### 4.3 Label

The label command puts text on a picture at a position. The text is typeset by TeX.
""" + "".join(f"\n### 4.{n} {title}\n\n{text}\n" for n, (title, text) in enumerate(_OTHER_SECTIONS, start=4))

DRAWING_BOOK_ZH = """# 绘图

## 第四章 绘图命令

### 4.1 描绘

描绘命令用画笔沿路径画线，路径是描绘命令唯一必需的参数。
箭头由参数 arrow 加上，箭头可以放在起点、中点或终点。
箭头的大小随画笔的线宽而变化，两端都有箭头时用 Arrows。

### 4.2 填充

填充命令给闭合路径的内部上色，所以填充的路径必须闭合。
渐变从一支画笔过渡到另一支画笔，轴向渐变沿一条线段进行。
放射渐变在两个圆之间进行，渐变的例子在示例文件 shade.asy 中。

### 4.3 标注

标注命令在图上的某个位置放置文字，文字由 TeX 排版。
""" + "".join(f"\n### 4.{n} {title}\n\n{text}\n" for n, (title, text) in enumerate(_OTHER_SECTIONS_ZH, start=4))


# A Chinese manual names what it teaches in English: the topics of its sections are Latin-script terms too
PACKAGES_BOOK_ZH = """# 宏包

## 第四章 常用宏包

### 4.1 描绘

描绘一个文档的链接要先在导言区加载宏包。
加载 hyperref 之后，目录和交叉引用都会变成链接，hyperref 的选项可以设置链接颜色。
hyperref 最好放在导言区的最后加载。

### 4.2 填充

文档末尾的文献列表可以自动生成。
BibTeX 读入文献数据库，BibTeX 按样式排好列表，运行 BibTeX 之后要再编译两次。

### 4.3 标注

标注命令在图上的某个位置放置文字，文字由 TeX 排版。
""" + "".join(f"\n### 4.{n} {title}\n\n{text}\n" for n, (title, text) in enumerate(_OTHER_SECTIONS_ZH, start=4))


@pytest.mark.parametrize("book, question, also", [
    (DRAWING_BOOK, "Summarize chapter 4", ["(also: arrowhead", "(also: gradient"]),
    (DRAWING_BOOK_ZH, "总结一下第四章", ["（还讲到：箭头", "（还讲到：渐变"]),
    (PACKAGES_BOOK_ZH, "总结一下第四章", ["（还讲到：hyperref", "（还讲到：BibTeX"]),
])
def test_a_summary_names_what_each_section_goes_on_to_teach(tmp_path, book, question, also):
    """A chapter of nine sections is read one sentence a section, which says how the section begins; the words a
    section uses again and again and its siblings do not (arrowheads in the draw section, gradients in the fill
    one) are named beside it, in the book's words."""
    from core.settings import Settings
    tool = RAGTool("learner", Settings(_env_file=None, data_dir=tmp_path / "data", llm_backend="none"))
    tool.add_text(book, title="Drawing", name="drawing.md")
    _, answer = ask(tool, question)
    assert answer.kind == "summarize" and not answer.refused
    lines = answer.text.splitlines()
    draw, fill, label = (next(line for line in lines if name in line) for name in
                         (("Draw**", "Fill**", "Label**") if "also" in also[0] else ("描绘**", "填充**", "标注**")))
    assert also[0].lower() in draw.lower() and also[1].lower() in fill.lower(), answer.text
    assert "also" not in label and "还讲到" not in label      # a section saying nothing again names nothing


PLOTTING_BOOK = """# Calculator tutorial

## Chapter 1 Numbers

### 1.1 Integers

Integers are exact and can be as large as memory allows. Integers are added, multiplied and divided exactly.
An integer division gives a fraction when the numbers do not divide.

### 1.2 Reals

Reals are stored with a precision that you can change. A real is printed with as many digits as its precision.
Reals lose their last digits when numbers of very different size are added.

## Chapter 2 Plotting

### 2.1 High-level plots

The ploth command draws a function over an interval. ploth samples the function at evenly spaced points.
With the Recursive flag, ploth subdivides an interval until the graph is almost straight.

### 2.2 Rectangles

Low-level plotting draws into rectangles before showing them. The ploth command can also draw into a rectangle.
Several rectangles are put together on one window, and ploth fills each with one graph.

### 2.3 Output

A finished plot is written to a file for printing. The ploth output goes to a window or to a PostScript file.
The size of a plot exported from ploth follows the window's size.

## Chapter 3 Programs

### 3.1 Functions

A function is written once and called many times. Its variables are local to it.
A function returns the value of its last expression.

### 3.2 Loops

A loop repeats its body for each value of a variable. A loop stops early with a break.
Loops over vectors visit each entry in order.
"""


def test_a_chapter_summary_says_first_what_the_whole_chapter_is_about(tmp_path):
    """The word a whole chapter is about is in every one of its sections, so no section's own topics name it
    (PARI's plotting chapter never said "ploth"): the summary names it first, against the book's other chapters."""
    from core.settings import Settings
    tool = RAGTool("learner", Settings(_env_file=None, data_dir=tmp_path / "data", llm_backend="none"))
    tool.add_text(PLOTTING_BOOK, title="Calculator", name="calculator.md")
    _, answer = ask(tool, "Summarize chapter 2")
    assert answer.kind == "summarize" and not answer.refused
    about = next(line for line in answer.text.splitlines() if line.startswith("**Mostly about:**"))
    assert "ploth" in about and "integer" not in about.lower(), answer.text
    _, first = ask(tool, "Summarize chapter 1")
    about = next(line for line in first.text.splitlines() if line.startswith("**Mostly about:**"))
    assert "ploth" not in about and "integer" in about.lower(), first.text


@pytest.mark.parametrize("question, translation", [
    ("元组为什么可以当字典的键？", "Why can tuples be used as dictionary keys?"),
    # a wish, then "要怎么写": one ask, searched whole in the book's language, not as two parts in Chinese
    ("我想写一个会调用自己的函数，要怎么写？", "How do I write a function that calls itself?"),
])
def test_a_question_to_a_library_with_no_book_in_its_language_is_always_searched_translated(
        llm_settings, fake_llm, question, translation):
    """Every book is English and the question Chinese: its own words meet nothing there, whatever the embedder
    finds close, so it is also asked in English before its evidence is judged."""
    tool = RAGTool("learner", llm_settings)
    # a Chinese line in the English book matches the question's own words well: without the rule, that
    # line's strength would have spared the translation
    glossary = "\n\n## Chapter 9 Words for learners\n\nLearners in China ask: 元组为什么可以当字典的键？我想写一个会调用自己的函数，要怎么写？\n"
    tool.add_text(BOOK + glossary, title="Learning Python", name="learning-python.md")
    fake_llm.translation = translation
    fake_llm.answer = "Tuples are immutable, so they can be used as dictionary keys [1]."
    fake_llm.judgement = 0.95
    items = list(tool.ask_stream(question))
    answer = items[-1]
    assert translation_asked(fake_llm)
    assert not answer.refused and answer.citations, answer.text
    # the passages found as asked are shown at once, before the translation; the translated search's replace them
    sources = [item for item in items if isinstance(item, SourcesEvent)]
    assert isinstance(items[0], SourcesEvent) and len(sources) >= 2


def chinese_almanac(sections: int = 110) -> str:
    """A long Chinese text of distinct sections (the unknown-word rule judges a library of 100+ passages only)."""
    things = ["苹果", "梨", "李子", "樱桃", "榅桲", "无花果", "葡萄", "核桃", "榛子", "甜瓜", "柿子"]
    return "# 园艺年历\n\n" + "\n\n".join(
        f"## 第 {n} 则：{things[n % 11]}\n\n" + "".join(
            f"第 {w} 周，第 {n} 号苗床的{things[n % 11]}要浇 {(n + w) % 7 + 1} 桶水，再铺一层{things[(n + w) % 11]}叶子。"
            for w in range(1, 6)) for n in range(sections))


def test_a_question_to_books_all_in_the_other_language_is_not_refused_for_its_own_words(llm_settings, fake_llm):
    """Every book is Chinese: none holds an English word, so only the translation's own words can be unknown. The
    English words looked up one by one give words no book holds ("several" -> 若干个词); the question is answered
    from the passage its translation finds, not refused for them. The bar is set where the passage clears it only
    without the unknown-word penalty (strength 0.86 here, 0.71 with it), so the penalty would refuse it."""
    tool = RAGTool("learner", llm_settings.model_copy(update={"answer_min_support": 0.8}))
    tool.add_text(BOOK_ZH, title="机器学习笔记", name="ml-notes.md")
    tool.add_text(chinese_almanac(), title="园艺年历", name="almanac-zh.md")
    fake_llm.translation = "用几句话说说学习器的毛病？"
    fake_llm.terms = {"several": "若干个词", "sentences": "句子群", "learners": "学习者们"}
    fake_llm.answer = "过拟合是指学习器把训练样本自身的特点当作所有样本的一般性质 [1]。"
    fake_llm.judgement = 0.95
    answer = tool.ask("In several sentences, what goes wrong with learners?")
    assert translation_asked(fake_llm)
    assert not answer.refused and "never mention" not in answer.text, answer.text
    assert "ml-notes.md" in {c.doc_name for c in answer.citations}


STATEMENTS_BOOK = """# Modeling language

## Chapter 4 Statements

Statements are basic units of the model description. All statements are divided into two categories:
declaration statements and functional statements. Each statement ends with a semicolon.
""" + "".join(f"""
### 4.{n} {name} statement

The {name} statement is written once for each {name} of the model. It names the {name} and gives its attributes.
""" for n, name in enumerate(["set", "parameter", "variable", "constraint", "objective", "solve", "check", "display",
                              "printf"], start=1))


def test_a_chapter_summary_keeps_its_introductions_plan_of_what_comes(tmp_path):
    """Nine sections are read one sentence each; the chapter's introduction says how the chapter is laid out
    ("two categories: declaration statements and functional statements") and keeps two."""
    from core.settings import Settings
    tool = RAGTool("learner", Settings(_env_file=None, data_dir=tmp_path / "data", llm_backend="none"))
    tool.add_text(STATEMENTS_BOOK, title="Modeling language", name="modeling.md")
    _, answer = ask(tool, "Summarize chapter 4")
    assert answer.kind == "summarize" and "functional statements" in answer.text, answer.text


def test_a_section_is_mostly_about_its_nouns_not_the_verbs_it_repeats():
    """The MathProg manual's statements chapter says "specified" in every other sentence: its topics are the
    things it names (domain, attribute), not what it keeps doing with them."""
    from rag.summary import section_topics
    from rag.types import Chunk
    statements = ("The domain is specified after the name. A domain is specified as an indexing expression. "
                  "The attribute is specified after the domain. Each attribute is specified once. "
                  "A domain may be empty. The attribute integer is optional.")
    others = ["A number is a sequence of digits. Numbers may have a sign.",
              "A comment starts with a hash sign. Comments are ignored by the translator.",
              "The output is written to a file. The file name is given on the command line."]
    groups = [[Chunk(f"d:{n}", "d", n, text, [f"Chapter {n}"], n, n, 0, len(text), 60)]
              for n, text in enumerate([statements, *others], start=1)]
    topics = section_topics(groups)[0]
    assert "domain" in topics and "attribute" in topics and "specified" not in topics, topics


ENGINES_ZH = ("pdfTEX 在 ε-TEX 扩展的基础上构建，增加对 PDF 输出的支持。它的主页在 pdftex.org。\n\n"
              "LuaTEX 是 pdfTEX 指定的后继者，内置 Lua 语言解释器。\n\n"
              "XeTEX 通过第三方库，增加对 OpenType 字体的支持。\n\n"
              "如果你在其他系统中安装了 xetex 软件包，需要配置 fontconfig 才能找到字体。")


def _evidence(text: str, quoted: str, n: int = 1):
    from rag.evidence import Evidence, split_units
    from rag.types import Chunk, SearchHit
    chunk = Chunk(doc_id="d", chunk_id=f"c{n}", ordinal=n, text=text, heading_path=[], page_start=7, page_end=7,
                  char_start=0, char_end=len(text), token_count=len(text))
    unit = next(u for u in split_units(text) if u.text.startswith(quoted))
    return Evidence(n, SearchHit(chunk=chunk, doc_name="guide.pdf", doc_title="guide", score=1 / n, rank=n),
                    unit, 0.9, 0.9, None)


def test_a_side_takes_the_books_entry_for_it_before_its_sentence_or_after_another_sides():
    """Each engine's own search found a sentence about it that does not open with its name ("它的主页在…", the
    fontconfig steps for XeTeX); the book's entries for them, just before it or right after another side's, are what
    the comparison shows. A side's lines stop where another side's entry begins."""
    from rag.shapes import compare_answer
    sides = ("pdfTeX", "LuaTeX", "XeTeX")
    found = (_evidence(ENGINES_ZH, "它的主页在"), _evidence(ENGINES_ZH, "LuaTEX 是"),
             _evidence(ENGINES_ZH, "如果你在其他系统中"))
    answer = compare_answer("pdfTeX、LuaTeX、XeTeX 这几个引擎到底有啥不一样？", sides, tuple([e] for e in found), [],
                            zh=True, side_chars=300)
    parts = {side: answer.text.split(f"**{side}**：")[1].split("\n\n**")[0] for side in sides}
    assert parts["pdfTeX"].startswith("pdfTEX 在 ε-TEX 扩展的基础上构建"), answer.text
    assert parts["XeTeX"].startswith("XeTEX 通过第三方库"), answer.text
    assert "XeTEX" not in parts["LuaTeX"] and "LuaTEX" not in parts["pdfTeX"], answer.text


@pytest.mark.parametrize("text, states", [
    ("References: man pages: nutupsdrv(8), upsdrvctl(8), upsdrvsvcctl(8)", False),
    ("Figure 3.2: Stack diagram of lists and tuples", False),
    ("图 3.2 列表和元组的栈图", False),
    ("To start and stop drivers, use upsdrvctl or upsdrvsvcctl.", True),
    ("Lists are mutable, tuples are not.", True),
    ("列表是可变的，而元组是不可变的。", True),
])
def test_a_line_states_something_when_it_has_a_verb(text, states):
    from core.nlp import has_verb
    assert has_verb(text) is states


def test_a_comparison_side_does_not_take_the_unrelated_code_above_its_sentence():
    """The ups.conf entry right above "svcctl manages the drivers as system services." is the previous example, not
    the side: a side's sentence takes the code above it only when it points back at it ("This program …")."""
    from rag.evidence import Evidence, split_units
    from rag.shapes import compare_answer
    from rag.types import Chunk, SearchHit
    text = ("The entry in the configuration file looks like this:\n\n```\n[sparky]\ndriver = apcsmart\n```\n\n"
            "svcctl manages the drivers as system service instances. It mimics drvctl.\n\n"
            "drvctl starts every driver in the configuration file.")
    chunk = Chunk(doc_id="d", chunk_id="c1", ordinal=1, text=text, heading_path=["Drivers"], page_start=3,
                  page_end=3, char_start=0, char_end=len(text), token_count=60)
    hit = SearchHit(chunk=chunk, doc_name="manual.pdf", doc_title="manual", score=1.0, rank=1)
    units = split_units(text)
    svc = next(u for u in units if u.text.startswith("svcctl manages"))
    drv = next(u for u in units if u.text.startswith("drvctl starts"))
    answer = compare_answer("drvctl vs svcctl?", ("drvctl", "svcctl"),
                            ([Evidence(1, hit, drv, 0.9, 0.9, None)], [Evidence(2, hit, svc, 0.9, 0.9, None)]), [],
                            zh=False, side_chars=350)
    assert "**svcctl**: svcctl manages the drivers" in answer.text and "apcsmart" not in answer.text, answer.text


def test_a_chapters_topics_do_not_list_a_chinese_word_twice():
    """"快捷方式、快捷、管理员、注册、注册表" read as "快捷方式、管理员、注册表"; Latin words stay apart however they overlap."""
    from rag.summary import _add_topic
    topics: list[str] = []
    for word in ["快捷方式", "快捷", "管理员", "注册", "注册表", "plot", "plotinit"]:
        _add_topic(topics, word)
    assert topics == ["快捷方式", "管理员", "注册表", "plot", "plotinit"]


INSTALL_GUIDE = """# Installer guide

## 1 Ways to install

### 1.1 Network install

The network installer is very small: it downloads only the packages you ask for.

### 1.2 DVD install

The DVD installer copies the whole distribution to your local disk.

### 1.3 Notes

The same installer program runs whichever way it is started. The main difference between the two is that a network
install gets the packages available today. Read the licence before a network install or a DVD install.

## 2 Input files

### 2.1 Including files

The include command starts a new page before it reads the file. Sometimes we do not want that, and use the input
command instead, which only inserts the text of the file. Names given to the include command and the input command
should have no spaces.
"""

INSTALL_GUIDE_ZH = """# 安装指南

## 1 安装方式

### 1.1 网络安装

网络安装程序本身非常小，它只从网上下载你要求的软件包。

### 1.2 光盘安装

光盘安装程序把整套软件复制到你的本地磁盘上。

### 1.3 说明

不管从哪里载入，执行的都是同一个安装程序。两者最明显的区别是网络安装得到的是当前可用的软件包。使用网络安装和光盘安装之前都要阅读许可协议。

## 2 插入文件

### 2.1 插入命令

\\include 在读入文件之前会另起一页。有的时候我们并不需要这样，而是用 \\input 命令，它纯粹是把文件里的内容插入。
使用 \\include 和 \\input 命令载入的文件名最好不要加空格。

### 2.2 居中

在表格里要居中时，用 \\centering 命令或者 center 环境都可以。有一点可以将两者区分开来：center 等环境会在上下文产生一个额外间距，
而 \\centering 等命令不产生，只是改变对齐方式。
"""


@pytest.mark.parametrize("question, lead, context, not_lead", [
    ("What's the difference between a network install and a DVD install?",
     "main difference between the two", "same installer program", "Read the licence"),
    ("网络安装和光盘安装有啥区别？", "两者最明显的区别", "同一个安装程序", "阅读许可协议"),
    ("What's the difference between the include command and the input command?",
     "starts a new page", "only inserts the text", "no spaces"),
    ("\\include 和 \\input 有啥区别？", "另起一页", "纯粹是把文件里的内容插入", "不要加空格"),
    # the sides named with words between the name and its kind ("center 等环境")
    ("center 环境和 \\centering 命令有什么区别？", "额外间距", "只是改变对齐方式", "都可以"),
])
def test_a_comparison_is_led_by_the_books_own_statement_of_the_difference(tmp_path, question, lead, context,
                                                                         not_lead):
    """The book's comparison leads the answer though no one sentence names both sides: a sentence naming one side
    that says how "the two" (两者) differ, shown after the sentence it points back at; or two sentences in a row naming
    one side each, the second set against the first ("而是", "instead"); or one naming each by its name with words
    before its kind ("center 等环境" for "center 环境"). A sentence saying the same of both (read the licence; no spaces
    in file names; either will do) does not lead."""
    tool = text_library(tmp_path / "data", (INSTALL_GUIDE, "Installer guide", "installer.md"),
                        (INSTALL_GUIDE_ZH, "安装指南", "installer-zh.md"))
    _, answer = ask(tool, question)
    assert answer.kind == "compare" and not answer.refused
    first = answer.text.split("\n\n")[0]
    bold_lead = first.split("**")[1]
    assert lead in first and context in first and not_lead not in bold_lead, answer.text


@pytest.mark.parametrize("sentence, states", [
    ("两者最明显的区别是通过网络安装得到的当前可用的程序包。", True),
    ("二者的不同之处在于是否换页。", True),
    ("The main difference between the two is that lists are mutable.", True),
    ("The difference is that a tuple cannot change.", True),
    ("The two differ in how they keep their memory.", True),
    ("There is no difference in speed.", False),
    ("两种颜色差别很大。", False),
    ("Both are sequences of values.", False),
])
def test_a_sentence_stating_how_the_pair_differs(sentence, states):
    from rag.compare import states_the_difference
    assert states_the_difference(sentence) is states


@pytest.mark.parametrize("sentence, sets", [
    ("A list is mutable, whereas a tuple is not.", True),
    ("有的时候我们并不需要这样，而是用 \\input 命令。", True),
    ("\\clearpage 则能够另起一页。", True),
    ("Lists and tuples are both sequences.", False),
    ("而且它很快。", False),
    ("否则很可能会出错。", False),
    ("使用 \\include 和 \\input 命令载入的文件名最好不要加空格。", False),
])
def test_a_sentence_setting_one_thing_against_another(sentence, sets):
    from rag.compare import sets_against
    assert sets_against(sentence) is sets


def itil_notes(filler: int = 14) -> str:
    """A Chinese manual where finding a file's package and getting the file back are two sections far apart."""
    sections = [f"## 附录 {n} 维护记录 {n}\n\n第 {n} 号学校的服务器每周检查一次磁盘和备份，检查结果写进维护记录，"
                f"发现问题时联系 ICT 联络人处理，并在下一次例会上报告。" for n in range(filler)]
    sections.insert(3, "## 查找文件所属的软件包\n\n使用 dpkg --search <文件名> 可以查到一个文件来自哪个软件包，"
                       "例如 dpkg --search /etc/opera6rc.fixed 打印 opera: /etc/opera6rc.fixed。")
    sections.insert(11, "## 从软件包中取回文件\n\n先取回那个 deb 软件包，再用 dpkg --vextract <软件包名称> /tmp 把它展开到 "
                        "/tmp 中，不必安装就能拿到被误删的系统文件。警告：永远不要在根目录将软件包拆开。")
    # passages sharing the whole question's words that answer neither ask
    for n, where in ((1, "服务器"), (7, "工作站"), (9, "瘦客户端")):
        sections.insert(n, f"## {where}上的软件包与文件\n\n{where}上的每个文件都来自某个 deb 软件包，软件包来自档案库；"
                           f"安装软件包就会得到它的文件，不安装软件包就没有这些文件，删除软件包也会删除它的文件。")
    return "# 学校 IT 运维手册\n\n" + "\n\n".join(sections)


def test_an_english_question_asking_two_things_of_a_chinese_book_is_answered_ask_by_ask(llm_settings, fake_llm):
    """"how do i find which package a file came from, and get that file back out of the .deb without installing it?"
    over a Chinese manual: the question and its translation are each cut into their two asks, each ask is searched
    in both languages, and the answer quotes both sections."""
    tool = RAGTool("learner", llm_settings)
    tool.add_text(itil_notes(), title="学校 IT 运维手册", name="itil.md")
    fake_llm.translation = "如何找到文件来自哪个包，并且从.deb中提取该文件而不安装它？"
    fake_llm.answer = "Use dpkg --search with the file name to find its package [1]."
    answer = tool.ask("how do i find which package a file came from, and get that file back out of the .deb "
                      "without installing it?")
    assert translation_asked(fake_llm) and not answer.refused, answer.text
    assert "dpkg --search" in answer.text and "dpkg --vextract" in answer.text, answer.text


@pytest.mark.parametrize("sentence, leans", [
    ("它给文档内部的交叉引用和参考文献自动加上了超链接，还提供了几个命令。", True),
    ("其次在正文中需要索引的地方定义索引。", True),
    ("It is enabled by default.", True),
    ("However, a tuple cannot be changed.", True),
    ("hyperref 宏包提供了一些超链接功能。", False),
    ("This chapter introduces lists and tuples.", False),
    ("Iteration is the repetition of a block.", False),       # "It" only as a whole word
    ("it-lists are shown first.", False),                       # a name that happens to begin so
])
def test_a_sentence_opening_by_pointing_back_is_told(sentence, leans):
    from rag.summary import leans_back
    assert leans_back(sentence) is leans


def test_a_summary_line_is_the_sentence_that_names_the_section_not_the_one_after_it():
    """The LaTeX notes' hyperlink section opens "hyperref 宏包[1]提供了一些超链接功能。它给文档内部的交叉引用…": the book's
    reference mark is prose, not symbols, and the sentence that says 它 leans on it; the first is the summary's."""
    from rag.summary import key_sentences
    from rag.types import Chunk
    text = ("hyperref 宏包[1]提供了一些超链接功能。它给文档内部的交叉引用和参考文献自动加上了超链接，还提供了几个命令。"
            "例如6.1是编号形式的超链接，而这个链接则是文字形式，都指向本节开始。")
    chunk = Chunk(chunk_id="d:0", doc_id="d", ordinal=0, text=text, heading_path=["6 杂项", "6.1 超链接"],
                  page_start=85, page_end=85, char_start=0, char_end=len(text), token_count=80)
    chosen = key_sentences([chunk], "6.1 超链接", 1)
    assert [k.text for k in chosen] == ["hyperref 宏包[1]提供了一些超链接功能。"]


def test_a_section_of_list_items_is_summarized_by_an_item():
    """NUT's "Redundancy support" section is three bullet items and nothing else: its summary line is an item, without
    its mark (a sentence had to start with a capital letter, so the section had no line at all)."""
    from rag.summary import key_sentences
    from rag.types import Chunk
    text = ("• upsmon can handle high-end servers which receive power from multiple UPSes simultaneously.\n\n"
            "• upsmon won't initiate a shutdown until the total power situation across all source UPSes becomes "
            "critical.\n\n• You can lose a UPS completely as long as you still have the minimum number of sources.")
    chunk = Chunk(chunk_id="d:0", doc_id="d", ordinal=0, text=text, heading_path=["3 Features", "3.4 Redundancy support"],
                  page_start=22, page_end=22, char_start=0, char_end=len(text), token_count=60)
    chosen = key_sentences([chunk], "3.4 Redundancy support", 1)
    assert len(chosen) == 1 and chosen[0].text.startswith(("upsmon", "You can lose")), chosen



def test_a_question_asking_two_things_shows_as_many_quotes_as_its_kind_does(tmp_path):
    """"whats the default padding in a table cell? and where does the text sit vertically by default?": each ask's
    best unit leads (RAGTool._parts puts them first), and the answer goes on to the shape's number of quotes, not
    one per ask only: the top and bottom padding, next in the evidence, are stated too."""
    from rag.evidence import Evidence, split_units
    from rag.shapes import shape_of
    from tests.libraries import text_hit
    padding = text_hit("The default padding is 6 points on the left and the right. Top padding defaults to 3 points.",
                       heading=("Cell padding",), page=4, n=1)
    bottom = text_hit("BOTTOMPADDING sets the space under the text.", heading=("Cell padding",), page=5, n=2)
    valign = text_hit("Text in a cell sits at the bottom by default.", heading=("Vertical alignment",), page=9, n=3)
    units = [(padding, 0, 0.8), (valign, 0, 0.7), (padding, 1, 0.6), (bottom, 0, 0.55)]
    evidence = [Evidence(hit.rank, hit, split_units(hit.chunk.text)[k], score, score, None) for hit, k, score in units]
    tool = RAGTool("learner", Settings(_env_file=None, data_dir=tmp_path / "data", llm_backend="none"))
    parts = ["whats the default padding in a table cell?", "and where does the text sit vertically by default?"]
    answer = tool._book_answer(" ".join(parts), None, evidence, None, parts, shape_of("lookup"))
    for said in ("6 points", "bottom by default", "Top padding", "BOTTOMPADDING"):
        assert said in answer.text, answer.text


CLIENTS_ZH = """# 学校网络手册

## 1 服务器的配置

配置主服务器、工作站和瘦客户端服务器可以安装在相同机器上。瘦客户端服务器也被称为组合配置的一部分。

在带有 10-15 台瘦客户端和一些工作站的小型网络中，这是可接受的解决方案。

## 2 客户端计算机

胖客户端的优点是所有程序在本地运行，这可以为用户提供很大的灵活性与性能。

瘦客户端的主要优点是再次使用较旧的设备，而不会增加运行的复杂性。很多人使用旧 PC 作为瘦客户端。
"""


def test_a_comparison_side_is_the_sentence_opening_with_its_name_not_one_naming_it_in_passing(tmp_path):
    """"瘦客户端" was quoted from "配置主服务器、工作站和瘦客户端服务器可以…" (a server, the side only in a compound
    word), though "瘦客户端的主要优点是…", scored about as well, says what it is (unseen u6z-007)."""
    tool = RAGTool("learner", Settings(_env_file=None, data_dir=tmp_path / "data", llm_backend="none"))
    tool.add_text(CLIENTS_ZH, title="学校网络手册", name="clients.md")
    _, answer = ask(tool, "胖客户端和瘦客户端到底有啥区别？")
    assert answer.kind == "compare" and not answer.refused
    thin = answer.text.split("**瘦客户端**：")[1]
    assert thin.startswith("瘦客户端的主要优点是再次使用较旧的设备"), answer.text


def test_a_sides_sentence_about_it_alone_goes_first_among_those_scored_alike():
    """Within SIDE_OPENING_MARGIN of the best, the first sentence opening with the side's name goes first; not one
    naming another side too, nor a glossary entry (the entries' own rule places those), nor one scored far lower."""
    from rag.evidence import Evidence, Unit
    from rag.tool import SIDE_OPENING_MARGIN, _opening_with_name_first
    from rag.types import Chunk, SearchHit

    def ev(text: str, score: float) -> Evidence:
        chunk = Chunk(doc_id="d", chunk_id=text[:8], ordinal=0, text=text, heading_path=[], page_start=1, page_end=1,
                      char_start=0, char_end=len(text), token_count=20)
        hit = SearchHit(chunk=chunk, doc_name="d.md", doc_title="d", score=score, rank=1)
        return Evidence(1, hit, Unit(0, len(text), "sentence", text), score, score, None)
    passing = ev("It should be run immediately after upsdrvctl in your startup scripts.", 0.8)
    opening = ev("upsdrvctl starts and stops every driver named in the config file.", 0.8 - SIDE_OPENING_MARGIN / 2)
    assert _opening_with_name_first([passing, opening], ["upsdrvctl"], ["upsdrvsvcctl"]) == [opening, passing]
    far = ev("upsdrvctl starts and stops every driver.", 0.8 - 2 * SIDE_OPENING_MARGIN)
    assert _opening_with_name_first([passing, far], ["upsdrvctl"], ["upsdrvsvcctl"]) == [passing, far]
    both = ev("upsdrvctl and upsdrvsvcctl both start drivers.", 0.79)
    entry = ev("upsdrvctl: the driver controller.", 0.79)
    assert _opening_with_name_first([passing, both, entry], ["upsdrvctl"], ["upsdrvsvcctl"])[0] is passing


@pytest.mark.parametrize("text, name, compound", [
    ("瘦客户端服务器也被称为组合配置的一部分。", "瘦客户端", True),      # a server, named after the side
    ("瘦客户端的主要优点是再次使用较旧的设备。", "瘦客户端", False),
    ("瘦客户端于 1984 年在 MIT 引入。", "瘦客户端", False),
    ("thin client servers are big.", "thin client", True),
    ("Thin clients reuse old machines.", "thin client", False),       # a plural is the name whole
    ("The list comprehension is short.", "list", True),
    ("A tuple is a sequence.", "tuple", False),
    ("upsdrvctl starts every driver.", "upsdrvctl", False),
    ("upsdrvctlx is another program.", "upsdrvctl", True),            # cut inside a word
    ("It runs after upsdrvctl.", "upsdrvctl", False),                 # not opening with it at all
    ("\\clearpage 命令会在另起一页之前排版浮动体。", "\\clearpage", False),   # the command itself, in Chinese prose
])
def test_a_name_opening_a_sentence_may_be_only_the_first_part_of_a_longer_one(text, name, compound):
    from core.nlp import names_a_compound
    assert names_a_compound(text, name) is compound
