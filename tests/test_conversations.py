"""Past conversations: the `qa` episodes of one person grouped by session (PDFLearningAssistant.conversations
and .conversation), with the real stores and embedding model and no language model (extractive answers)."""
from __future__ import annotations

from assistant.history import NOT_FOUND
from assistant.registry import get_assistant
from tests.browser.pdfgen import AVIATION, make_pdf

FIRST = ["What happens when the two angle of attack sensors disagree?",
         "How often does recurrent training repeat the scenarios?"]
SECOND = ["What do pilots complete before returning to service?"]


def test_conversations_are_listed_newest_first_with_their_turns_and_only_for_their_owner(settings, tmp_path):
    path = tmp_path / "flight.pdf"
    path.write_bytes(make_pdf(AVIATION, title="Flight Control Notes"))
    alice = get_assistant("alice", settings)
    alice.load_document(path, session_id="s-load")
    answers = {}
    for session, questions in (("s-first", FIRST), ("s-second", SECOND)):
        for question in questions:
            answers[question] = alice.ask_once(question, session_id=session)

    past = alice.conversations()
    assert [(c["session_id"], c["first_question"], c["questions"]) for c in past] == [
        ("s-second", SECOND[0], 1), ("s-first", FIRST[0], 2)]          # newest first; the upload is no conversation
    assert past[0]["started"] > past[1]["started"] and past[1]["last"] >= past[1]["started"]
    assert len(alice.conversations(limit=1)) == 1

    turns = alice.conversation("s-first")
    assert [t["question"] for t in turns] == FIRST                      # oldest first
    for turn in turns:
        result = answers[turn["question"]]
        if result.refused:
            assert turn["answer"] == NOT_FOUND and turn["cited_labels"] == []
        else:
            assert turn["answer"] and turn["answer"].split()[0] in result.text
            assert turn["cited_labels"] == [c.label for c in result.citations]
    assert any(not answers[q].refused for q in FIRST)
    assert alice.conversation("no-such-session") == []

    bob = get_assistant("bob", settings)
    assert bob.conversations() == [] and bob.conversation("s-first") == []
