"""`python -m memory.eval DIR`: the EVAL.md format, per-user search, a temporary data folder."""
from __future__ import annotations

import json

import pytest

from memory import eval as memory_eval

MEMORIES = [
    {"user": "u1", "id": "D1:1", "content": "Ann: I adopted a grey kitten called Pixel.", "timestamp": "2023-05-08T13:56:00", "session": "session_1", "memory_type": "episodic"},
    {"user": "u1", "id": "D1:2", "content": "Ben: Lovely! I started learning the cello.", "timestamp": "2023-05-08T13:56:00", "session": "session_1", "memory_type": "episodic"},
    {"user": "u1", "id": "D2:1", "content": "Ann: We hiked up Ben Nevis in the rain.", "timestamp": "2023-06-01T09:00:00", "session": "session_2", "memory_type": "episodic"},
    {"user": "u2", "id": "D1:1", "content": "Cy: My kitten is called Pixel too, funny.", "timestamp": "2023-05-09T10:00:00", "session": "session_1", "memory_type": "episodic"},
    {"user": "u2", "id": "D1:2", "content": "Di: I bake sourdough every weekend.", "timestamp": "2023-05-09T10:00:00", "session": "session_1", "memory_type": "episodic"},
]
QUESTIONS = [
    {"user": "u1", "id": "q1", "question": "What instrument is Ben learning?", "answer": "cello", "category": 4, "gold": ["D1:2"]},
    {"user": "u1", "id": "q2", "question": "Which mountain did Ann climb?", "answer": "Ben Nevis", "category": 4, "gold": ["D2:1"]},
    {"user": "u2", "id": "q3", "question": "What does Di bake?", "answer": "sourdough", "category": 4, "gold": ["D1:2"]},
    {"user": "u2", "id": "q4", "question": "Who adopted a kitten called Pixel?", "answer": "-", "category": 1, "gold": ["D1:1", "D9:9"]},
]


@pytest.fixture
def evalset(tmp_path):
    d = tmp_path / "tiny"
    d.mkdir()
    (d / "memories.jsonl").write_text("\n".join(json.dumps(m) for m in MEMORIES) + "\n")
    (d / "questions.jsonl").write_text("\n".join(json.dumps(q) for q in QUESTIONS) + "\n")
    return d


def test_eval_prints_one_json_line_last(evalset, capsys, monkeypatch):
    created = []
    real_mkdtemp = memory_eval.tempfile.mkdtemp
    monkeypatch.setattr(memory_eval.tempfile, "mkdtemp", lambda **kw: created.append(real_mkdtemp(**kw)) or created[-1])
    memory_eval.main([str(evalset)])
    last = capsys.readouterr().out.strip().splitlines()[-1]
    result = json.loads(last)
    for key in ("set", "n", "hit@1", "hit@5", "hit@10", "mrr@10", "recall@10", "add_per_s", "search_p50_ms"):
        assert key in result
    assert result["set"] == "tiny" and result["n"] == 4
    assert result["hit@10"] == 1.0            # every question has a gold memory of its own user
    # q4 (user u2) has two gold ids, one of which does not exist: recall 0.5 for it.
    assert result["recall@10"] == pytest.approx((1 + 1 + 1 + 0.5) / 4)
    assert result["hit@1"] >= 0.75
    assert created and not any(__import__("os").path.exists(p) for p in created)  # temp folder removed


def test_first_hit_rank():
    assert memory_eval.first_hit_rank(["a", "b", "c"], {"c", "x"}) == 3
    assert memory_eval.first_hit_rank(["a"], {"x"}) is None


def test_missing_files_are_a_clear_error(tmp_path, capsys):
    with pytest.raises(SystemExit):
        memory_eval.main([str(tmp_path)])
    assert "memories.jsonl is missing" in capsys.readouterr().err
