"""Answer evaluation: the metric functions, `rag.eval --answers` end to end, and `rag.eval_sets mix`."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from rag import answer_metrics as M
from rag import eval as eval_module
from rag.types import Citation


# == metric functions ============================================================================
@pytest.mark.parametrize("text, span", [
    ("Revenue was $7301.5 million.", "7,301.5"),
    ("Revenue was 7,301.5 million.", "$7301.5"),
    ("The margin grew 15 % last year", "15%"),
    ("It sold 3000 units", "3,000"),
    ("It sold 3,000 units", "3000"),
    ("Total: 7,301.50", "7301.5"),
    ("Full-width ７３０１.５ digits", "7,301.5"),
])
def test_numbers_are_compared_as_numbers(text, span):
    assert M.contains(text, span)


@pytest.mark.parametrize("text, span", [
    ("Revenue was 7,301.5 million.", "7,301"),
    ("Revenue was 17,301 million.", "7,301"),
    ("Revenue was 7,3015 million.", "7,301"),
    ("about 1,200 million", "1.2 billion"),
])
def test_a_number_matches_only_a_whole_equal_number(text, span):
    assert not M.contains(text, span)


def test_case_and_whitespace_are_folded():
    assert M.contains("> A Dictionary   maps\nkeys to VALUES. [1]", "a dictionary maps keys to values")
    assert M.contains("«It’s here»", "it's here")
    assert not M.contains("a dictionary maps keys", "a dictionary maps values")
    assert not M.contains("anything", "")
    assert not M.contains("anything", "   ")


def test_chinese_span_is_found_across_spaces_and_line_breaks():
    answer = "> 《战国无双3》是由光荣和 ω-force\n合作开发的动作游戏。[1]"
    assert M.contains(answer, "光荣和ω-force")
    assert M.contains("１９８７年成立", "1987年")
    assert not M.contains(answer, "村雨城")


def test_numbers_extracts_values_not_spellings():
    assert M.numbers("-$1,561M in FY2022, 737, 777X and 7,301.50; 1,2345") == \
        ["1561", "2022", "737", "777", "7301.5", "1", "2345"]


def test_evidence_prefers_gold_text_then_numbers_then_the_answer():
    with_text = {"answer": "tuple", "gold": [{"doc": "a.md", "text": "A tuple is immutable"}]}
    assert M.evidence_hit("> a TUPLE is   immutable. [1]", with_text)
    assert not M.evidence_hit("> tuple [1]", with_text)           # the gold text, not the short answer
    numeric = {"answer": "Adj. EBITDA was $2,018mn in FY 2023", "gold": [{"doc": "x.pdf", "page": 3}]}
    assert M.evidence_hit("EBITDA reached 2018 million (fiscal 2023).", numeric)
    assert not M.evidence_hit("EBITDA reached 2,018 million.", numeric)       # 2023 is missing
    assert not M.evidence_hit("EBITDA reached 2,01 million in 2023.", numeric)
    words = {"answer": "Customer deposits", "gold": [{"doc": "x.pdf", "page": 3}]}
    assert M.evidence_hit("The largest liability is customer  DEPOSITS.", words)
    assert not M.evidence_hit("The largest liability is debt.", words)


def citation(doc: str, start: int | None, end: int | None, quote: str = "") -> Citation:
    return Citation(n=1, doc_id="d", doc_name=doc, page_start=start, page_end=end, chunk_id="d:0", score=1.0,
                    quote=quote)


def test_cited_gold_by_page_range_or_quote():
    paged = {"gold": [{"doc": "r.pdf", "page": 5}]}
    assert M.cited_hit([citation("r.pdf", 4, 6)], paged)
    assert not M.cited_hit([citation("r.pdf", 6, 7)], paged)
    assert not M.cited_hit([citation("other.pdf", 5, 5)], paged)
    assert not M.cited_hit([], paged)
    spans = {"gold": [{"doc": "n.md", "text": "A dictionary maps keys to values"}]}
    assert M.cited_hit([citation("n.md", None, None, "… a dictionary maps\nkeys to values; …")], spans)
    assert not M.cited_hit([citation("other.md", None, None, "a dictionary maps keys to values")], spans)


def test_summarize_shares_and_medians():
    def rec(answerable, evidence=False, cited=False, refused=False, chars=10, seconds=1.0, first=0.5):
        return {"answerable": answerable, "evidence": evidence, "cited": cited, "refused": refused,
                "chars": chars, "seconds": seconds, "first_token_s": first, "llm": "none"}
    out = M.summarize([rec(True, True, True, chars=10, seconds=1), rec(True, False, True, True, chars=30, seconds=3),
                       rec(False, refused=True, chars=20, seconds=2), rec(False, chars=40, seconds=4)])
    assert out == {"n_answerable": 2, "n_unanswerable": 2, "evidence_in_answer": 0.5, "cited_gold": 1.0,
                   "refused_unanswerable": 0.5, "refused_answerable": 0.5, "answer_chars_p50": 25.0,
                   "answer_s_p50": 2.5, "first_token_s_p50": 0.5, "llm": "none"}
    only_unanswerable = M.summarize([rec(False, refused=True)])
    assert only_unanswerable["evidence_in_answer"] is None and only_unanswerable["refused_answerable"] is None
    assert only_unanswerable["refused_unanswerable"] == 1.0


def test_a_point_is_stated_by_any_of_its_alternatives():
    question = {"points": [["immutable", "cannot be changed"], ["dictionary key", "hashable"], ["不可变"]]}
    assert M.points_stated("Tuples CANNOT be  changed, so they can be a Dictionary key. [1]", question) == \
        [True, True, False]
    assert M.points_stated("元组是不可变的", question) == [False, False, True]
    assert M.points_stated("anything", {"answer": "x"}) is None


def test_point_recall_and_full_answers_overall_by_type_and_by_language():
    def rec(points, kind, lang, refused=False, answerable=True):
        return {"answerable": answerable, "evidence": False, "cited": False, "refused": refused, "chars": 1,
                "seconds": 1.0, "first_token_s": 1.0, "llm": "none", "points": points, "type": kind, "lang": lang}
    out = M.summarize([rec([True, True], "compare", "en"), rec([True, False], "compare", "zh"),
                       rec([False, False, False, False], "summarize", "en", refused=True)])
    assert out["point_recall"] == round((1 + 0.5 + 0) / 3, 4) and out["full_answers"] == round(1 / 3, 4)
    assert out["by_type"]["compare"] == {"n": 2, "point_recall": 0.75, "full_answers": 0.5,
                                         "refused_answerable": 0.0}
    assert out["by_type"]["summarize"]["refused_answerable"] == 1.0
    assert out["by_lang"]["en"]["point_recall"] == 0.5 and out["by_lang"]["zh"]["n"] == 1
    plain = M.summarize([{k: v for k, v in rec([True], "x", "en").items() if k not in ("points", "type", "lang")}])
    assert "point_recall" not in plain      # sets without points keep their line as it was


# == rag.eval --answers end to end ===============================================================
GARDEN = """# Garden notes

## Tomatoes

Tomato seedlings need sixteen hours of light every day before they are planted outside.
The greenhouse thermometer read 27.5 degrees on the warmest afternoon of April.

## Compost

Compost heaps should be turned every three weeks so that air reaches the middle.
A heap made only of grass cuttings turns into a slimy mat.
"""

TRAINS = """# Railway history

## Gauges

The standard gauge of 1,435 millimetres was chosen by George Stephenson for the early lines.
Broad gauge lines survived in the west of England until 1892.

## Signals

Semaphore signals show danger when the arm is horizontal.
"""

ANSWERABLE = [
    {"id": "a1", "question": "How many hours of light do tomato seedlings need?", "answer": "sixteen hours",
     "type": "lookup", "lang": "en", "points": [["sixteen hours", "16 hours"], ["every day", "daily"]],
     "gold": [{"doc": "garden.md",
               "text": "Tomato seedlings need sixteen hours of light every day before they are planted outside."}]},
    {"id": "a2", "question": "How often should compost heaps be turned?", "answer": "every three weeks",
     "gold": [{"doc": "garden.md",
               "text": "Compost heaps should be turned every three weeks so that air reaches the middle."}]},
    {"id": "a3", "question": "Which gauge did George Stephenson choose for the early lines?", "answer": "1435 mm",
     "gold": [{"doc": "trains.md",
               "text": "The standard gauge of 1435 millimetres was chosen by George Stephenson"}]},
]
UNANSWERABLE = [
    {"id": "u1", "question": "What was the FY2019 fixed asset turnover ratio of Activision Blizzard?",
     "answer": "", "gold": []},
    {"id": "u2", "question": "Who composed the opera Turandot?", "answer": "", "gold": []},
]


def write_set(folder: Path, questions: list[dict]) -> Path:
    (folder / "docs").mkdir(parents=True)
    (folder / "docs" / "garden.md").write_text(GARDEN, encoding="utf-8")
    (folder / "docs" / "trains.md").write_text(TRAINS, encoding="utf-8")
    (folder / "questions.jsonl").write_text("\n".join(json.dumps(q) for q in questions) + "\n", encoding="utf-8")
    return folder


def test_eval_answers_end_to_end(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("DATA_DIR", str(tmp_path / "never-used"))
    from rag import eval as rag_eval
    dataset = write_set(tmp_path / "tiny", ANSWERABLE + UNANSWERABLE)
    out_file = tmp_path / "answers.jsonl"
    result = rag_eval.main([str(dataset), "--answers", "--llm", "none", "--quiet", "--answers-out", str(out_file)])

    assert result["n"] == 5 and result["n_answerable"] == 3 and result["n_unanswerable"] == 2
    assert {"hit@1", "hit@5", "hit@10", "mrr@10", "chunks", "query_p50_ms"} <= set(result)   # retrieval kept
    for key in ("evidence_in_answer", "cited_gold", "refused_unanswerable", "refused_answerable"):
        assert 0.0 <= result[key] <= 1.0, key
    assert result["evidence_in_answer"] > 0          # the extractive answer quotes the gold sentences
    assert result["cited_gold"] > 0
    assert result["answer_chars_p50"] > 0
    assert 0 < result["first_token_s_p50"] <= result["answer_s_p50"] < 60
    assert result["llm"] == "none"
    assert not (tmp_path / "never-used").exists()     # a temporary data folder, never DATA_DIR

    records = [json.loads(line) for line in out_file.read_text(encoding="utf-8").splitlines()]
    assert [r["id"] for r in records] == ["a1", "a2", "a3", "u1", "u2"]
    assert {"question", "answer", "refused", "citations", "evidence", "cited", "seconds"} <= set(records[0])
    assert any(r["evidence"] for r in records[:3])
    assert not any(r["evidence"] or r["cited"] for r in records[3:])   # nothing to find for the unanswerable
    assert records[0]["type"] == "lookup" and len(records[0]["points"]) == 2 and "points" not in records[1]
    assert result["point_recall"] == sum(records[0]["points"]) / 2 > 0   # the quoted sentence states them
    assert set(result["by_type"]) == {"lookup"} and set(result["by_lang"]) == {"en"}


def test_eval_answers_only_the_questions_of_one_type(tmp_path, monkeypatch):
    """--type KIND keeps the questions of that type (a learner set's comparisons, say), so one kind is measured
    through the product's own command."""
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    from rag import eval as rag_eval
    dataset = write_set(tmp_path / "tiny", ANSWERABLE + UNANSWERABLE)
    out_file = tmp_path / "answers.jsonl"
    result = rag_eval.main([str(dataset), "--answers", "--llm", "none", "--quiet", "--type", "lookup",
                            "--answers-out", str(out_file)])
    assert result["n"] == 1 and set(result["by_type"]) == {"lookup"}
    assert [json.loads(line)["id"] for line in out_file.read_text(encoding="utf-8").splitlines()] == ["a1"]


# == rag.eval_sets mix ===========================================================================
def test_mix_links_documents_and_blanks_the_other_sets_gold(tmp_path):
    from rag import eval_sets
    own = write_set(tmp_path / "own", ANSWERABLE)
    other = tmp_path / "other"
    other.mkdir()
    (other / "questions.jsonl").write_text(
        "\n".join(json.dumps({"id": f"q{i}", "question": f"Question {i}?", "answer": f"answer {i}",
                              "gold": [{"doc": "x.pdf", "page": i}]}) for i in range(10)), encoding="utf-8")
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "book.md").write_text(TRAINS, encoding="utf-8")
    (plain / ".hidden").write_text("x", encoding="utf-8")

    out = tmp_path / "mixed"
    summary = eval_sets.main(["mix", str(out), "--docs", str(own), "--questions-from", str(other),
                              "--answerable-from", str(own), "--limit-per-source", "4", "--seed", "3"])
    assert summary == {"out": str(out), "docs": 2, "answerable": 3, "unanswerable": 4}
    links = sorted((out / "docs").iterdir())
    assert [p.name for p in links] == ["garden.md", "trains.md"]
    assert all(p.is_symlink() and p.resolve() == (own / "docs" / p.name).resolve() for p in links)
    lines = [json.loads(line) for line in (out / "questions.jsonl").read_text(encoding="utf-8").splitlines()]
    unanswerable = [q for q in lines if q["id"].startswith("unans-other-")]
    assert len(unanswerable) == 4 and all(q["gold"] == [] for q in unanswerable)
    assert {q["source_answer"] for q in unanswerable} <= {f"answer {i}" for i in range(10)}
    assert sorted((q for q in lines if not q["id"].startswith("unans-")), key=lambda q: q["id"]) == ANSWERABLE

    again = eval_sets.main(["mix", str(out), "--docs", str(own), "--questions-from", str(other),
                            "--answerable-from", str(own), "--limit-per-source", "4", "--seed", "3"])
    assert again == summary
    assert (out / "questions.jsonl").read_text(encoding="utf-8").count("\n") == 7   # same seed, same set

    from_plain = eval_sets.main(["mix", str(tmp_path / "p"), "--docs", str(plain), "--questions-from", str(other)])
    assert from_plain["docs"] == 1 and from_plain["unanswerable"] == 10 and from_plain["answerable"] == 0
    assert [p.name for p in (tmp_path / "p" / "docs").iterdir()] == ["book.md"]


def test_forgetting_cached_questions_removes_exactly_their_vectors(settings):
    from core.embeddings import get_embedder
    embedder = get_embedder(settings)
    embedder.embed(["What is a tuple?", "What is a list?"], kind="query")
    assert eval_module.forget_cached_questions(embedder, ["What is a tuple?"]) == 1
    assert eval_module.forget_cached_questions(embedder, ["What is a tuple?"]) == 0
    assert embedder.forget(["What is a list?"]) == 1
