"""Financial abbreviations, and a reader's short forms, are searched as the words documents use (rag.abbreviations)."""
from __future__ import annotations

import pytest

from core.text import period_parts, with_fiscal_years
from rag.abbreviations import spell_out
from rag.evidence import question_weights, terms_of
from rag.tool import RAGTool, searched_text


@pytest.mark.parametrize("question, expected", [
    ("Did Pfizer grow its PPNE between FY20 and FY21?", "Did Pfizer grow its property, plant and equipment between"),
    ("What was net PP&E in 2019?", "What was property, plant and equipment in 2019?"),
    ("What is the FY2021 COGS?", "What is the FY2021 cost of goods sold (cost of sales)?"),
    ("average capex as a % of revenue", "average capital expenditures (purchases of property and equipment) as a %"),
    ("How did SG&A and R&D change?", "How did selling, general and administrative expenses and research and "
                                    "development change?"),
    ("Which category performed best (by top line)?", "Which category performed best (by revenue)?"),
])
def test_abbreviations_are_spelled_out(question, expected):
    assert spell_out(question).startswith(expected)


@pytest.mark.parametrize("text", [
    "How many steps does the loop take?",      # EPS inside a word
    "The cogs of the machine turn.",           # a gear's cogs, not costs
    "What does Hoppe's theorem say?",
    "What is EBITDA?",                         # documents write EBITDA as it is
])
def test_words_that_only_look_like_abbreviations_stay(text):
    assert spell_out(text) == text


def test_a_quarter_written_as_one_token_counts_as_its_year_and_quarter():
    assert period_parts("q22023") == ["2023", "q2"] and period_parts("2023h1") == ["2023", "h1"]
    assert period_parts("2023") is None and period_parts("fy2022") is None
    assert with_fiscal_years(["drop", "q22023", "fy21"]) == ["drop", "2023", "q2", "fy21", "2021"]
    # No document writes "Q22023": as a term of its own it would weigh most and sink every passage's coverage.
    weights = question_weights("Which region had the biggest drop in Q22023 revenues?", {"region": 3, "drop": 2,
                                                                                         "revenues": 5}, 50)
    assert "q22023" not in weights and {"2023", "q2"} <= set(terms_of("Q22023 revenues"))


def test_a_question_in_abbreviations_finds_and_quotes_the_line_that_spells_them_out(settings):
    tool = RAGTool("alice", settings)
    balance = tool.add_text(
        "# Consolidated Balance Sheets\n\n| (Millions) | 2021 | 2020 |\n|---|---|---|\n"
        "| Inventories | 9,059 | 8,046 |\n| Property, plant and equipment, net | 14,882 | 13,745 |\n"
        "| Goodwill | 49,208 | 49,577 |\n", title="Acme 2021 annual report")
    tool.add_text("# Plant safety\n\nOur plants follow strict safety rules, and every employee is trained each "
                  "year on the equipment they use.", title="Acme sustainability report")
    tool.add_text("# People\n\nWe grew our teams in 2021 and 2020 across all regions.", title="Acme people report")
    question = "Did Acme grow its PPNE between FY20 and FY21?"
    assert searched_text(question) == "Did Acme grow its property, plant and equipment between FY20 and FY21?"
    answer = tool.ask(question)
    assert not answer.refused, answer.text
    assert answer.citations[0].doc_id == balance.doc_id
    assert "14,882" in answer.text


@pytest.mark.parametrize("question, expected", [
    ("send both stdout and stderr into one log", "send both stdout (standard output) and stderr (standard error) into"),
    ("which Folder does it use?", "which Folder (directory) does it use?"),
    ("can [[ do regex?", "can [[ do regex (regular expression)?"),
    ("the folder is a directory", "the folder is a directory"),     # the document's word is there already
    ("what does __init__ do?", "what does __init__ do?"),             # inside a name, not a word of its own
    # a path's piece is a name, and the document's word is added once
    ("show the current folder, like user@host:~/dir$", "show the current folder (directory), like user@host:~/dir$"),
    ("${var:-默认值} 跟 ${var:=默认值} 有什么区别？", "${var:-默认值} 跟 ${var:=默认值} 有什么区别？"),   # syntax as written
    ("copy the folder into /usr/local/dir/ and the other folder", "copy the folder (directory) into /usr/local/dir/ "
                                                                   "and the other folder"),
])
def test_a_readers_short_form_is_searched_beside_the_documents_word(question, expected):
    assert spell_out(question) == expected or spell_out(question).startswith(expected)


def test_a_word_whose_other_form_the_library_holds_is_not_unknown(tmp_path):
    """"the current folder" over a manual that says "directory" everywhere and "folder" nowhere: the question is
    searched with both, and "folder" is not a word "your documents never mention"."""
    from rag.evidence import unknown_words
    from core.settings import Settings
    tool = RAGTool("learner", Settings(_env_file=None, data_dir=tmp_path / "data", llm_backend="none"))
    focus, df, _ = tool.question_terms("how do i show the current folder in my prompt?")
    assert "(directory)" in focus
    held = {word: 5 for word in df}
    assert unknown_words(focus, {**held, "folder": 0, "directory": 12}, 500) == []
    assert unknown_words(focus, {**held, "folder": 0, "directory": 0}, 500) == ["folder"]


def test_the_first_part_of_a_compound_and_a_hedge_are_not_unknown():
    """A learner's "multi-line stuff" and "all those e.disc style things" over a tutorial that never writes "multi"
    or "style": neither is a word the question hinges on, so neither lowers the evidence; the compound's last part
    and the other words are still judged."""
    from rag.evidence import unknown_words
    question = "how do i run my commands from a file, also multi-line stuff? and all those e.disc style things"
    held = {word: 3 for word in ("commands", "file", "line", "disc", "also", "those")}
    unknown = unknown_words(question, {**held, "multi": 0, "style": 0, "stuff": 0, "things": 0}, 500)
    assert unknown == [], unknown
    assert unknown_words(question, {**held, "multi": 0, "style": 0, "line": 0}, 500) == ["line"]
    assert unknown_words("is a non-empty sheet allowed?", {"empty": 0, "sheet": 4, "allowed": 2}, 500) == ["empty"]
