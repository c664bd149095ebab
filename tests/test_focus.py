"""The search reads a question without the instructions about its answer's form (rag.focus)."""
from __future__ import annotations

import pytest

from rag.focus import search_focus
from rag.tool import RAGTool


@pytest.mark.parametrize("question, focus", [
    ("What is the FY2019 capex for 3M? Round your answer to two decimal places.", "What is the FY2019 capex for 3M?"),
    ("What is the revenue growth rate? Answer in units of percents and round to one decimal place.",
     "What is the revenue growth rate?"),
    ("Using the cash flow statement, answer the following question to the best of your abilities: how much "
     "cash came from operations?", "Using the cash flow statement, how much cash came from operations?"),
    ("What is recursion? Answer in two sentences.", "What is recursion?"),
    ("Does Boeing have an improving gross margin as of FY2022? If gross margin is not a useful metric for a company "
     "like this, then please state that and explain why.", "Does Boeing have an improving gross margin as of FY2022?"),
    ("Explain recursion step by step.", "Explain recursion"),
    # a role goes; what the role may read stays (it says where to look)
    ("What is the total revenue growth rate for Block? Approach the question asked by assuming the standpoint of an "
     "investment banking analyst who only has access to the statement of income.",
     "What is the total revenue growth rate for Block? the statement of income"),
    ("Assuming the perspective of a tax lawyer, what did Boeing pay in taxes in 2022?",
     "what did Boeing pay in taxes in 2022?"),
    ("请用一句话回答：什么是元组？", "什么是元组？"),
    # a learner's hedges say nothing of the topic
    ("can someone explain what upsd actually does? is it the thing that talks to the ups or not",
     "can explain what upsd does? is it the thing that talks to the ups or not"),
    ("pls what do ATS, PSU and SCD stand for in the nut docs", "what do ATS, PSU and SCD stand for in the nut docs"),
    ("结果保留两位小数，2019年营收增长率是多少？", "2019年营收增长率是多少？"),
    # a function the question calls keeps its brackets: they say it is the function, not the word
    ("any example where outer() is actually useful?", "any example where outer() is useful?"),
])
def test_answer_format_instructions_are_not_searched_for(question, focus):
    assert search_focus(question) == focus


@pytest.mark.parametrize("question", [
    "What is a tuple?",
    "What is bread and butter?",
    "How do I round a number to two decimal places in Python?",   # rounding is the topic here, asked as a question
    "How do I round the total to two decimal places?",
    "Round to two decimal places.",                               # nothing would be left: the question stays
    "What is the standpoint of the author on recursion?",          # a standpoint asked about is the topic
    "Why do people assume the role of the victim?",
])
def test_a_question_without_instructions_is_searched_as_written(question):
    kept = search_focus(question)
    assert kept == question or kept.rstrip("?") in question, kept
    assert "round" in kept.lower() or "round" not in question.lower()


def test_an_instruction_does_not_pull_in_passages_about_its_own_words(settings):
    tool = RAGTool("alice", settings)
    statement = tool.add_text("# Cash flow statement\n\nCapital expenditures for fiscal 2019 were 1,699 million "
                              "dollars, paid for plants and equipment.", title="filing")
    tool.add_text("# Share units\n\nThe number of share units awarded shall be rounded to the nearest whole number "
                  "of decimal places determined by the committee.", title="plan")
    result = tool.retrieve("What were capital expenditures in fiscal 2019? Round your answer to two decimal places.")
    assert result.queries[0] == "What were capital expenditures in fiscal 2019?"
    assert result.hits[0].chunk.doc_id == statement.doc_id
    assert all("rounded" not in h.chunk.text for h in result.hits[:1])
    evidence = tool.evidence("What were capital expenditures in fiscal 2019? Round your answer to two decimal places.",
                             result.hits)
    assert "1,699" in evidence[0].unit.text
