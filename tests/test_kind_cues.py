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
