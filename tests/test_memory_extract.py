"""spaCy extraction for semantic memory: English model, Chinese blank pipeline + jieba.posseg."""
from __future__ import annotations

from memory import extract as ex


def test_english_entities_concepts_and_verb_relations():
    result = ex.extract("Alice uses PyTorch to train neural networks at Google.")
    assert result.language == "en"
    keys = set(result.keys)
    assert {"alice", "pytorch", "google", "neural network"} <= keys   # head noun lemmatised
    assert ("alice", "pytorch", "USE") in {(r.source, r.target, r.type) for r in result.relations}


def test_english_names_drop_determiners_and_numbers_are_not_entities():
    result = ex.extract("The Analytical Engine was designed in 1837 by Charles Babbage.")
    keys = set(result.keys)
    assert "analytical engine" in keys and "charles babbage" in keys
    assert not any(k.startswith("the ") for k in keys)
    assert "1837" not in keys


def test_sentence_entities_are_chained():
    result = ex.extract("Backpropagation computes gradients of the loss function.")
    pairs = {(r.source, r.target) for r in result.relations}
    assert ("backpropagation", "gradient") in pairs
    assert ("gradient", "loss function") in pairs


def test_chinese_routes_to_jieba_posseg_entities():
    result = ex.extract("张三在北京大学学习机器学习。李四研究神经网络。")
    assert result.language == "zh"
    labels = {e.key: e.label for e in result.entities}
    assert labels["张三"] == "PERSON" and labels["李四"] == "PERSON"
    assert labels["北京大学"] == "ORG"
    assert "神经网络" in labels
    pairs = {(r.source, r.target) for r in result.relations}
    assert ("张三", "北京大学") in pairs
    assert not any({"张三", "李四"} == {a, b} for a, b in pairs)      # different sentences


def test_query_keys_include_single_nouns():
    assert {"quicksort", "pivot"} <= set(ex.query_keys("quicksort pivot"))
    assert "ada lovelace" in ex.query_keys("What did Ada Lovelace do?")


def test_pipelines_load_once():
    assert ex.english_pipeline() is ex.english_pipeline()
    assert ex.chinese_pipeline() is ex.chinese_pipeline()


def test_empty_and_symbol_text():
    assert ex.extract("").entities == []
    assert ex.extract("!!! ???").entities == []
