"""A passage's pointers to other sections (rag.crossrefs), and the search following them (rag.tool)."""
from __future__ import annotations

import pytest

from rag.crossrefs import referenced_numbers


@pytest.mark.parametrize("text, numbers", [
    ("Command history (see Section 9.1 [Bash History Facilities], page 152) and history expansion (see Section 9.3 "
     "[History Interaction], page 154) are enabled by default.", ["9.1", "9.3"]),
    ("The loop is described in Chapter 4, with its exercises.", ["4"]),
    ("See also Section 5.", ["5"]),
    ("see section 2.3.1.", ["2.3.1"]),
    ("cf. §3.2 for the proof", ["3.2"]),
    ("核函数的选择详见第六章的讨论。", ["6"]),
    ("参见 3.2 节。", ["3.2"]),
    ("（见 6.3）", ["6.3"]),
    ("参考第 12 章。", ["12"]),
    # no pointer: a number that is not a section's, a section named without being pointed to
    ("I see 3.2 apples on the table.", []),
    ("Section 4 of the contract is void.", []),
    ("第三章讲了线性模型。", []),
])
def test_the_sections_a_passage_points_to(text, numbers):
    assert referenced_numbers(text) == numbers


HISTORY_MANUAL = """# Shell manual

## 1 Introduction

### 1.1 Starting

The shell reads commands from the terminal and runs them one at a time.
Command history (see Section 2.1 [History Facilities]) is enabled by default in an interactive shell.

### 1.2 Prompts

The prompt is printed before each command is read from the terminal.

### 1.3 Jobs

A job is a pipeline started from the terminal, in the foreground or the background.

## 2 Using History Interactively

### 2.1 History Facilities

The list keeps the last HISTSIZE entries, 500 unless set otherwise, in a file named by HISTFILE.

### 2.2 Expansion

Expansion takes words from the list into the current line.
"""


def test_a_section_the_best_passage_points_to_joins_the_passages(tmp_path):
    """With room for one hit, a question about the history finds the introduction's pointer ("see Section 2.1"):
    the best chunk of the section it points to joins the hits, right after it, once."""
    from core.settings import Settings
    from rag.tool import RAGTool
    tool = RAGTool("reader", Settings(_env_file=None, data_dir=tmp_path / "data", llm_backend="none", top_k=1,
                                      chunk_size=30, chunk_overlap=5))
    tool.add_text(HISTORY_MANUAL, title="Shell manual", name="shell.md")
    question = "Is the command history enabled by default in an interactive shell?"
    result = tool.retrieve(question)
    assert [h.chunk.heading_path[-1] for h in result.hits] == ["1.1 Starting"]
    evidence = tool.evidence(question, result.hits)
    assert tool._with_referred_sections(question, result, evidence)
    assert [h.chunk.heading_path[-1] for h in result.hits] == ["1.1 Starting", "2.1 History Facilities"]
    assert "HISTSIZE" in result.hits[1].chunk.text
    # the section is held now: asked again, nothing more joins
    assert not tool._with_referred_sections(question, result, tool.evidence(question, result.hits))
    assert len(result.hits) == 2
