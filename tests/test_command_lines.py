"""A manual's commands without a prompt are code: told apart from prose and table rows, shown whole."""
import pytest

from rag.command_lines import HOST_PROMPT, is_command_line
from rag.evidence import split_units


@pytest.mark.parametrize("line", [
    "tlmgr install <package-name>", "dpkg --search < 文件名 >", "dpkg --vextract < 软件包名称 > /tmp",
    "upsdrvctl -t shutdown", "tlmgr update --all --self", "ls -l", "echo $HOME", "gcc -o hello hello.c",
    "python setup.py install", "pdflatex file.tex", "mkdir -p /chroot/nut/dev",
    "xdvi sample2e.dvi # Unix",                 # a trailing comment says which system, not what the line is
])
def test_a_programs_name_with_options_placeholders_or_paths_is_a_command(line):
    assert is_command_line(line)


@pytest.mark.parametrize("line", [
    "the -v option prints more",            # a common word first: a sentence
    "variables -a and -b are set",          # a stop word among the arguments
    "make install",                         # "make" starts sentences; nothing marks it as a command
    "apt-get install foo",                  # no option, path or placeholder
    "libpam-module-0 V:0, I:0 100 plug-in",  # a table row's cells
    "dpkg --search 文件的名字",              # Chinese outside a placeholder
    "Use ls -l to list files.",             # a sentence's end
    "bash",
    "the result # of lines is printed",       # a "#" inside a sentence is no comment
])
def test_a_sentence_a_table_row_or_a_bare_word_is_not(line):
    assert not is_command_line(line)


def test_a_prompt_with_its_host_and_directory_is_a_prompt():
    assert HOST_PROMPT.match("tjener:~# dpkg --search /etc/opera6rc.fixed")
    assert HOST_PROMPT.match("pi@raspberrypi:~ $ ls")
    assert not HOST_PROMPT.match("Note: ~ $ x")


# the Debian Edu ITIL manual's two user cases, as the PDF gives them: the commands had been glued into the sentences
# around them ("共同作者：Knut Yrvin dpkg --search < 文件名 > 可以看起来像这样 …") or read as a table of short lines
FIND_PACKAGE = """用户案例：想要找到软件来自哪个软件包。
作者：Klaus Ade Johnstad。
共同作者：Knut Yrvin
dpkg --search < 文件名 >
可以看起来像这样
tjener:~# dpkg --search /etc/opera6rc.fixed
opera: /etc/opera6rc.fixed
"""

TLMGR = """两者也可以通过各自的命令行工具安装和更新宏包：
% TeX Live 命令行工具 tlmgr 的使用示例
% 安装/卸载宏包
tlmgr install <package-name>
tlmgr remove <package-name>
% 更新所有宏包（包括 tlmgr 本身）
tlmgr update --all --self
"""


def test_a_command_between_sentences_is_a_code_unit_and_a_session_keeps_its_output():
    units = split_units(FIND_PACKAGE)
    assert [u.text for u in units if u.kind == "code"] == [
        "dpkg --search < 文件名 >", "tjener:~# dpkg --search /etc/opera6rc.fixed\nopera: /etc/opera6rc.fixed"]
    assert "共同作者：Knut Yrvin" in [u.text for u in units if u.kind == "sentence"]


def test_commands_with_their_comments_are_one_block_of_code():
    units = split_units(TLMGR)
    assert [u.kind for u in units] == ["sentence", "code"]
    assert units[1].text.startswith("% TeX Live") and units[1].text.endswith("tlmgr update --all --self")


def test_a_command_after_a_bare_prompt_is_code():
    """The TeX Live guide writes its commands after "> ": the line is code, not prose glued to the sentence before."""
    from rag.command_lines import is_prompted_command
    assert is_prompted_command("> tlmgr option repository http://mirror.ctan.org/systems/texlive/tlnet")
    assert not is_prompted_command("> This is what the book says about it.")
    units = split_units("如果你从 DVD 安装了 TEX Live 并希望从网络获取更新，需要执行这个命令：\n\n"
                        "> tlmgr option repository http://mirror.ctan.org/systems/texlive/tlnet\n\n"
                        "这告诉 tlmgr 从就近的 CTAN 镜像获取未来更新。")
    assert [u.kind for u in units] == ["sentence", "code", "sentence"]
