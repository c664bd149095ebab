"""What a kind of question prefers in a passage beside its words (rag.evidence.KIND_CUES): a why-question a reason."""
from __future__ import annotations

import pytest

from rag.evidence import kind_bonus, split_units


@pytest.mark.parametrize("sentence", [
    "Again this is for the same reason that 1 / 7 just gave you 1/7: the result being exact, PARI doesn't see any "
    "reason to make it inexact.",
    "The loop never ends because the base case is never reached.",
    "The error is due to a missing colon at the end of the line.",
    "That's why a tuple can be a dictionary key.",
    "之所以要引入核函数，是为了在高维空间中线性可分。",
    "样本太少导致模型过拟合。",
    # a purpose is a reason too
    "The outboard design of the program was intended to reduce the load on the average system.",
    "This program was created separately so those people don't have to spend CPU time and RAM on it.",
])
def test_a_sentence_that_gives_a_reason_is_preferred_for_a_why_question(sentence):
    unit = next(u for u in split_units(sentence) if u.kind == "sentence")
    assert kind_bonus("why", unit) > 0 and kind_bonus("lookup", unit) == 0


@pytest.mark.parametrize("sentence", [
    "A tuple is a sequence of values.",
    "The function prints the list in order.",
    "核函数把样本映射到高维空间。",
])
def test_a_sentence_without_a_reason_gets_nothing_for_a_why_question(sentence):
    unit = next(u for u in split_units(sentence) if u.kind == "sentence")
    assert kind_bonus("why", unit) == 0


@pytest.mark.parametrize("text, quantity", [
    ("The text of the last $HISTSIZE commands (default 500) is saved.", True),
    ("Command history (see Section 9.1 [Bash History Facilities], page 152) and history expansion (see Section "
     "9.3 [History Interaction], page 154) are enabled by default.", False),
    ("As Figure 3.2 and Table 4 show, the loop stops [12].", False),
    ("见第 6 章和图 3-1。", False),
    ("长江全长 6300 公里（见第 2 章）。", True),
    ("The default line width is 0.5 bp.", True),
])
def test_a_number_that_points_somewhere_is_not_a_quantity(text, quantity):
    """A "how many" question prefers a unit that states a number; a section, page, figure or reference number
    is not one."""
    from rag.evidence import states_a_quantity
    assert states_a_quantity(text) == quantity


@pytest.mark.parametrize("question, asks", [
    ("why would anyone use absolute note names if \\relative is so much easier?", True),
    ("why would use absolute note names", True),            # as the scorer reads it: rag.focus drops "anyone"
    ("What's the point of \\fixed?", True),
    ("why use a tuple instead of a list?", True),
    ("绝对音高写法有什么好处？", True),
    ("why does my loop never end?", False),
    ("why is the variable empty after the loop?", False),
])
def test_a_question_asking_what_a_thing_is_good_for(question, asks):
    from rag.evidence import _ASKS_ADVANTAGE
    assert bool(_ASKS_ADVANTAGE.search(question)) is asks


def test_what_a_thing_is_good_for_answers_why_anyone_would_use_it(tmp_path):
    """"why would anyone use absolute note names if \\relative is so much easier?": the book's "absolute mode is useful
    for music with large intervals" answers it, though the pages around it say more about both modes."""
    from tests.libraries import text_library
    book = """# Learning Manual

## Absolute note names

Without \\relative, pitches are interpreted in absolute mode. In this mode, LilyPond treats all pitches as absolute
values: a c' always means middle C, and a g, always means the note on the bottom line of a bass staff. Writing a
melody in the treble clef involves a lot of quote marks.

With \\relative, the previous example needs no octave marks because this melody moves in small steps. If you make a
mistake with an octave mark while working in \\relative mode, it is very obvious, and many notes will be in the wrong
octave. When working in absolute mode, a single mistake will not be as visible.

However, absolute mode is useful for music with large intervals, and is extremely useful for computer-generated
files. When cutting and pasting melody fragments, absolute mode preserves the original octave.

## Durations

The duration of a note is written as a number after its name: 4 for a quarter note, 8 for an eighth note.
"""
    tool = text_library(tmp_path / "data", (book, "Learning Manual", "learning.md"))
    answer = tool.ask("why would anyone use absolute note names if \\relative is so much easier?").text
    assert "large intervals" in answer, answer

    def useful_score(question: str) -> float:
        evidence = tool.evidence(question, tool.retrieve(question).answering_hits, kind="why")
        return next(e.score for e in evidence if "is useful for music" in e.unit.text)

    # the same words, not asking what it is good for: the sentence saying so counts for less
    assert useful_score("why would anyone use absolute note names?") > \
        useful_score("why are absolute note names used?") + 0.08


@pytest.mark.parametrize("question, numbers", [
    ("可用性百分比和不可用性百分比咋算？书里那个 90% 和 95% 没看懂", {"90%", "95%"}),
    ("the curve with conductor 5077, how do they show the rank is 3?", {"5077"}),
    ("in the 1/7 example at the very start, why does gp print 1/7?", {"1/7"}),
    ("summarize chapter 10 please", set()),          # a pointer is the scope, not the passage
    ("第 3 章讲了什么？", set()),
    ("书里那个90%和95%没看懂", {"90%", "95%"}),       # written against the Chinese around it
    # a number in a name names the subject: every unit of the 737 MAX notice writes it
    ("By what date do comments on the 737 MAX proposed AD have to reach the FAA?", set()),
    ("How many people died on Lion Air 610 and Ethiopian Airlines 302?", set()),
    ("What was the revenue from bicycles in 2017?", set()),      # a year dates the question, every passage of it
    ("what does {1..5} print in step 2?", set()),     # one digit says nowhere in particular
])
def test_the_numbers_a_question_quotes_from_the_book(question, numbers):
    from rag.evidence import quoted_numbers
    assert quoted_numbers(question) == numbers


def test_a_unit_writing_a_number_the_question_quotes_counts_for_more(tmp_path):
    """"书里那个 90% 和 95% 没看懂": the sentences that write 90% and 95% are the ones asked about; the same question without
    the numbers scores them lower."""
    from rag.evidence import holds_number
    from tests.libraries import text_library
    book = """# 运行手册

## 可用性

可以用几种方法来衡量可用性。例如什么意味着可用性的百分比。重点要强调这是达成协议的服务时间内的可用性，而不是全天的整体可用性。

数值可以是 08：00 到 18：00 之间的可用性小时数，如果一天中系统宕机 1 小时，那么在达成协议的时间上，系统可用性为 90%。
如果以一个月 20 个工作日来衡量，那么系统的可用性时间为 95%。

## 服务台

服务台接收用户通过电话或电子邮件报告的事件，并为每个事件分配案件编号。
"""
    tool = text_library(tmp_path / "data", (book, "运行手册", "ops.md"))

    def best_holding_number(question: str) -> float:
        evidence = tool.evidence(question, tool.retrieve(question).answering_hits, kind="explain")
        return max(e.score for e in evidence if holds_number(e.unit.text, frozenset({"90%", "95%"})))

    assert holds_number("系统可用性为 90%。", frozenset({"90%"})) and not holds_number("为 190%", frozenset({"90%"}))
    assert best_holding_number("可用性百分比咋算？书里那个 90% 和 95% 没看懂") > \
        best_holding_number("可用性百分比咋算？书里那个没看懂") + 0.05


def test_a_what_is_question_prefers_what_a_thing_is_to_its_usage():
    from rag.evidence import Unit, kind_bonus
    usage = Unit(0, 20, "sentence", "pdfLATEX 用法如下。")
    command = Unit(0, 26, "code", "pdflatex hello_world(.tex)")
    statement = Unit(0, 40, "sentence", "pdfLATEX 支持 JPEG、PNG 和 PDF，不支持 EPS。")
    assert kind_bonus("explain", usage) < kind_bonus("explain", statement) == 0
    assert kind_bonus("explain", command) < 0
    # a how-to question wants the usage: the steps or code that follow it are its answer
    assert kind_bonus("howto", command) > 0 and kind_bonus("howto", usage) >= 0

