"""Tables and lists a PDF gives as short lines (rag.rows): one unit with their caption, never glued to the next
sentence; prose — wide or in a narrow column — stays sentences. The answers use the real embedder and stores."""
from __future__ import annotations

from rag import rows
from rag.evidence import split_units
from rag.tool import RAGTool
from rag.types import Answer

# As the Debian reference's page 36 reaches the text: a list, a table of short lines, its caption below it,
# and the next paragraph running on from the caption's line.
ZH_PAGE = """ls(1) 用于显示文件和目录的权限信息（更多）。当运行时带有“-l”选项，它将按给定顺序显示下列信息，第一个字母是文件类型，
后面九个字符是文件的访问权限，三个字符一组，按照用户、组和其他人的顺序表示，然后是链接数、所有者、组名和大小。

字符 说明
- 普通文件
d 目录
l 符号链接
p 命名管道
s 套接字

Table 1.4: “ls -l”输出的第一个字符列表
chown(1) 用于 root 账户修改文件的所有者。chgrp(1) 用于文件的所有者或 root 账户修改文件所属的组，chmod(1) 用于
文件的所有者或 root 账户修改文件和文件夹的访问权限，操作一个文件的基本语法在下面的例子里给出。
"""

# As "An Introduction to R" reaches the text: the table's rows run straight into the paragraph explaining them.
EN_PAGE = """One convenient use of R is to provide a comprehensive set of statistical tables. Functions
are provided to evaluate the cumulative distribution function, the probability density function
and the quantile function (given q, the smallest x such that P(X <= x) > q), and to simulate from it.
Distribution R name additional arguments
beta beta shape1, shape2, ncp
binomial binom size, prob
normal norm mean, sd
Poisson pois lambda
Prefix the name given here by 'd' for the density, 'p' for the CDF, 'q' for the quantile
function and 'r' for simulation (random deviates). The first argument is x for dxxx, q for
pxxx, p for qxxx and n for rxxx (except for rhyper, rsignrank and rwilcox, for which it is nn).
"""

# A narrow column: every line is short, none is a row.
NARROW = """Tuples are immutable, so you cannot
change their elements. Because tuples
are immutable, they can be used as
keys in a dictionary, which lists
cannot be, and they are compared
element by element from the first.
"""


def test_a_table_of_short_lines_is_one_unit_with_its_caption_below_it():
    units = split_units(ZH_PAGE)
    table = next(u for u in units if u.kind == "table")
    assert table.text.split("\n")[0] == "字符 说明" and "d 目录" in table.text.split("\n")
    assert table.text.endswith("Table 1.4: “ls -l”输出的第一个字符列表")
    # the caption is not glued to the next sentence any more, and the span covers the rows and the caption
    assert any(u.text.startswith("chown(1) 用于 root 账户修改文件的所有者") for u in units)
    assert ZH_PAGE[table.start:table.end].startswith("字符 说明") and ZH_PAGE[table.start:table.end].endswith("字符列表")


def test_rows_running_into_a_paragraph_end_where_the_prose_begins():
    units = split_units(EN_PAGE)
    table = next(u for u in units if u.kind == "table")
    assert table.text.split("\n")[-1] == "Poisson pois lambda"
    prefix = next(u for u in units if u.text.startswith("Prefix the name"))
    assert prefix.kind == "sentence" and prefix.text.endswith("(random deviates).")


def test_prose_in_a_narrow_column_and_a_wrapped_paragraph_stay_sentences():
    assert all(u.kind == "sentence" for u in split_units(NARROW))
    assert all(u.kind == "sentence" for u in split_units(EN_PAGE.split("Distribution")[0]))


# As the Debian reference's page 67 reaches the text: rows as wide as the prose (a Chinese cell fills the line, a
# cell wraps onto a line of its own), none ending a sentence, the caption a paragraph of its own below them.
WIDE_ROWS_PAGE = """等待已修正的 unstable 软件包移植到 testing。unstable 档案库的缺陷，交由各个维护者修改。

区域 软件包数量 软件包组件标准

main 67672 遵从 Debian 自由软件指导方针（DFSG），并且不依赖于
                                   non-free
non-free-firmware 31 not DFSG compliant, firmware required for reasonable system
installation experience
contrib 338 遵从 Debian 自由软件指导方针（DFSG），但依赖于 non-free
non-free 939 not DFSG compliant and not in non-free-firmware

Table 2.3: Debian 归档区域（area）列表

上述软件包的数量是 amd64 架构的。main 区域提供 Debian 系统（参见第 2.1.5 节）。
"""


def test_wide_rows_beside_their_caption_are_one_table_whatever_their_width():
    units = split_units(WIDE_ROWS_PAGE)
    table = next(u for u in units if u.kind == "table")
    lines = table.text.split("\n")
    assert lines[0].startswith("main 67672") and lines[-1] == "Table 2.3: Debian 归档区域（area）列表"
    assert "contrib 338 遵从 Debian 自由软件指导方针（DFSG），但依赖于 non-free" in lines
    assert WIDE_ROWS_PAGE[table.start:table.end].startswith("main 67672")
    assert [u.text for u in units if u.text.startswith("上述软件包")] == ["上述软件包的数量是 amd64 架构的。"]
    # a paragraph beside a caption that ends its sentences is prose, not the caption's table
    prose = WIDE_ROWS_PAGE.replace("non-free-firmware\n\nTable", "non-free-firmware.\n\nTable")
    assert not any(u.kind == "table" and u.text.startswith("main") for u in split_units(prose))


def test_a_caption_needs_a_number_and_a_long_table_is_shown_in_groups_under_its_first_line():
    assert rows.is_caption("Table 4.7: 安全和不安全的服务端口列表") and rows.is_caption("表 2-1 常用命令")
    assert not rows.is_caption("Table of contents") and not rows.is_caption("Figures show the data")
    header = "Package Popularity Size Description"
    body = [f"libpam-module-{i} V:{i}, I:{i} {100 + i} plug-in" for i in range(20)]
    text = "A long paragraph line that sets the width of this passage for the rows that follow it.\n" * 3 + \
        "\n".join([header] + body) + "\n"
    tables = [u for u in split_units(text) if u.kind == "table"]
    assert len(tables) > 1 and all(u.text.split("\n")[0] == header for u in tables)
    assert all(len(u.text) <= rows.GROUP_MAX_CHARS + len(header) + 80 for u in tables)


def test_rows_are_shown_one_a_line_and_never_become_markdown_lists():
    shown = rows.as_markdown("字符 说明\n- 普通文件\nd 目录\n# 注释\n1. 第一")
    assert shown.split("  \n") == ["字符 说明", "\\- 普通文件", "d 目录", "\\# 注释", "1\\. 第一"]
    assert rows.as_markdown("| a | b |\n|---|---|") == "| a | b |\n|---|---|"


def test_the_extractive_answer_quotes_the_table_the_question_asks_about(settings):
    tool = RAGTool("reader", settings)
    tool.add_text(ZH_PAGE, title="Debian 参考手册", name="debian.md")
    answer = [item for item in tool.ask_stream("ls -l 输出最前面那个字母代表啥？d 和 l 分别是什么意思") if isinstance(item, Answer)][-1]
    assert not answer.refused
    assert "d 目录  \nl 符号链接" in answer.text, answer.text     # the rows, one a line, as the book prints them


PORTS_PAGE = """许多流行的传输层服务都使用纯文本来传输包括密码验证信息在内的各类消息。使用纯文本在公网上传输密码是很糟
糕的做法，因为这样传输的密码很容易在网上被他人截获。为了确保整个沟通过程，包括密码信息在内都使用加密传
输来确保安全，您可以在“传输层安全（Transport Layer Security，TLS）”协议或者其前身之上运行这些服务。

不安全的服务名 端口 安全的服务名 端口
www (http) 80 https 443
smtp (邮件) 25 ssmtp (smtps) 465
telnet 23 telnets 992
imap2 143 imaps 993
pop3 110 pop3s 995

Table 4.7: 安全和不安全的服务端口列表
"""


def test_a_table_whose_rows_end_in_numbers_is_not_a_table_of_contents(settings):
    """Its rows end in a number as contents lines end in their page; a number inside the row, followed by a word,
    says it is a table. The contents of a book are still never evidence."""
    tool = RAGTool("reader", settings)
    tool.add_text(PORTS_PAGE, title="Debian 参考手册", name="debian.md")
    tool.add_text("# 目录\n\n1 概述 3\n2 安装 9\n3 配置 14\n4 认证 20\n5 网络 31\n", title="目录", name="toc.md")
    answer = [item for item in tool.ask_stream("https 和 imaps 分别用哪个端口？") if isinstance(item, Answer)][-1]
    assert "https 443" in answer.text and "imaps 993" in answer.text, answer.text
    assert all("toc.md" not in c.doc_name for c in answer.citations)


# Sessions typed at other prompts than Python's: R's "> " and a root shell's "# " (escaped by the converter).
R_SESSION = """As an artificial but cute example, consider the determinants of 2 by 2 matrices whose entries are digits.
A neat way of doing this uses the outer() function twice:
> d <- outer(0:9, 0:9)
> fr <- table(outer(d, d, "-"))
> plot(fr, xlab="Determinant", ylab="Frequency")
Notice that plot() here uses a histogram like plot method, because it "sees" that fr is of
class "table". It is also perhaps surprising that about 1 in 20 such matrices is singular.
"""

ROOT_SHELL = """对于典型的单用户工作站，通常简单地配置 sudo(8) 来使为非特权用户只需输入用户密码就能获得管理员权限。
\\# echo "penguin ALL=(ALL) ALL" >> /etc/sudoers
另外，可以使用下列命令使非特权用户无需密码就获得管理员权限。
\\# echo "penguin ALL=(ALL) NOPASSWD:ALL" >> /etc/sudoers
这些技巧只对你管理的单用户工作站中那个唯一的用户有用。
"""


def test_lines_typed_at_an_r_or_shell_prompt_are_code_and_the_prose_around_them_stays_whole():
    units = split_units(R_SESSION)
    code = [u for u in units if u.kind == "code"]
    assert [u.text.count("\n") for u in code] == [2] and code[0].text.startswith("> d <- outer(0:9, 0:9)")
    assert 'Notice that plot() here uses a histogram like plot method, because it "sees" that fr is of class "table".' \
        in [u.text for u in units]      # a line opening with "class" is prose here, not a Python class
    units = split_units(ROOT_SHELL)
    assert [u.text for u in units if u.kind == "code"] == ['# echo "penguin ALL=(ALL) ALL" >> /etc/sudoers',
                                                           '# echo "penguin ALL=(ALL) NOPASSWD:ALL" >> /etc/sudoers']
    assert units[-1].kind == "sentence" and units[-1].text.startswith("这些技巧")
    # a quotation in a note is not a prompt
    assert all(u.kind == "sentence" for u in split_units("He wrote:\n> To be, or not to be, that is the question.\n"))


def test_a_passage_that_starts_inside_a_table_keeps_its_last_rows_apart_from_the_prose():
    text = EN_PAGE[EN_PAGE.index("normal norm"):]
    units = split_units(text)
    assert units[0].kind == "table" and units[0].text == "normal norm mean, sd\nPoisson pois lambda"
    assert units[1].text.startswith("Prefix the name given here")


def test_lines_indented_under_code_are_its_body_not_rows():
    text = ("For example, suppose you want to take input from the user until they type done. You could write:\n\n"
            "while True:\n    line = input('> ')\n    if line == 'done':\n        break\n    print(line)\n\n"
            "The loop condition is True, which is always true, so the loop runs until it hits the break statement.\n")
    units = split_units(text)
    assert [u.kind for u in units] == ["sentence", "sentence", "code", "sentence"]
    assert units[2].text.endswith("        break\n    print(line)")


def test_what_a_shell_command_prints_stays_with_it_and_the_prose_after_it_does_not():
    text = ("尝试下列例子\n$ chmod 644 bar\n$ ls -l foo bar\n-rw-r--r-- 1 penguin penguin 0 Oct 16 21:39 bar\n"
            "-rw-r--r-- 1 penguin penguin 0 Oct 16 21:35 foo\n提示 如果你需要在 shell 脚本中访问“ls -l”显示的信息，你需要使用相关命令。\n")
    code = [u for u in split_units(text) if u.kind == "code"]
    assert len(code) == 1 and code[0].text.endswith("21:35 foo"), code
    text = ">>> len('banana')\n6\nThe len function returns the number of characters in a string, and it works\non lists too.\n"
    units = split_units(text)
    assert units[0].kind == "code" and units[0].text == ">>> len('banana')\n6"
    assert units[1].text.startswith("The len function returns")


def test_a_traceback_after_a_prompt_is_the_sessions_output():
    text = ("If we test this function with the words pots and stop, we expect True, but we get an IndexError:\n\n"
            ">>> is_reverse('pots', 'stop')\n...\n  File \"reverse.py\", line 15, in is_reverse\n"
            "    if word1[i] != word2[j]:\nIndexError: string index out of range\n\n"
            "For debugging this kind of error, my first move is to print the values of the indices.\n")
    units = split_units(text)
    assert [u.kind for u in units] == ["sentence", "code", "sentence"]
    assert units[1].text.endswith("IndexError: string index out of range")


def test_a_short_sentence_between_two_prompts_is_prose_not_output():
    units = split_units('The outer product is formed by the special operator %o%:\n> ab <- a %o% b\nAn alternative is\n'
                        '> ab <- outer(a, b, "*")\nThe multiplication function can be replaced by any function.\n')
    assert [(u.kind, u.text) for u in units][1:4] == [("code", "> ab <- a %o% b"), ("sentence", "An alternative is"),
                                                      ("code", '> ab <- outer(a, b, "*")')]


def test_lines_the_pdf_ran_together_do_not_make_ordinary_lines_rows():
    """A manual's entries each ran their first two lines together (about 150 columns); with three of them in a passage
    the third-widest line was one, and the ordinary 80-column lines below read as a table's rows."""
    run_together = ("* ($*) Expands to the positional parameters, starting from one. When the expansion is not within "
                    "double quotes, each positional parameter expands to a")
    ordinary = ["double quotes, it expands to a single word with the value of each parameter",
                "separated by the first character of the IFS special variable. That is, the value is",
                "equivalent to the parameters joined, where c is the first character of the value of the",
                "IFS variable. If IFS is unset, the parameters are separated by spaces. If IFS is"]
    text = "\n".join([run_together, *ordinary, run_together, *ordinary, run_together, "null, they are joined."])
    assert rows.passage_width(text) < 100
    assert all(unit.kind == "sentence" for unit in split_units(text))
