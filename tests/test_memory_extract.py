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


# -- a concept map worth reading (issue 11): no junk, one node per concept -------------------------

def test_urls_emails_and_file_names_leave_no_pieces():
    result = ex.extract("See https://github.com/foo/bar.html and www.example.com, or mail bob@uni.edu; "
                        "the slides are in lecture3.pdf. Recursion calls itself.")
    keys = set(result.keys)
    assert "recursion" in keys
    for junk in ("https", "http", "com", "github", "www", "html", "pdf", "edu", "example.com"):
        assert not any(junk in k.split() or junk in k for k in keys if k != "recursion"), (junk, keys)


def test_document_words_numbers_and_ordinals_are_dropped():
    result = ex.extract("Chapter 3 covers gradient descent. Figure 2 shows the Transformer architecture. "
                        "See Table 4 on page 12, Exercise 5 and the Appendix. The first section was in 2018.")
    keys = set(result.keys)
    assert {"gradient descent", "transformer"} <= keys
    for junk in ("chapter", "figure", "table", "page", "exercise", "appendix", "section", "2018", "first"):
        assert junk not in keys, (junk, keys)
    assert not any(len(k) < 2 or k.isdigit() for k in keys)
    assert not any(e.label == "LAW" for e in result.entities)


def test_case_and_plural_variants_share_one_key_and_a_readable_name():
    result = ex.extract("Tuples are immutable. A tuple can hold classes. TUPLE is the same word.")
    assert result.keys.count("tuple") == 1 and "tuples" not in result.keys
    assert "class" in result.keys
    tuple_entity = next(e for e in result.entities if e.key == "tuple")
    assert tuple_entity.name.lower() == "tuple"                      # "Tuples" shows as "Tuple"


def test_normalise_key_folds_plurals_without_breaking_singular_words():
    from memory.graph.base import normalise_key
    assert normalise_key("Tuples") == normalise_key("tuple") == normalise_key("TUPLE") == "tuple"
    assert normalise_key("classes") == "class" and normalise_key("Neural  Networks") == "neural network"
    assert normalise_key("policies") == "policy" and normalise_key("LLMs") == "llm"
    assert normalise_key("training data") == "training data" and normalise_key("number multiplies") == "number multiplies"
    for word in ("analysis", "bus", "process", "series", "news", "paris", "mcas", "支持向量机"):
        assert normalise_key(word) == word
    for word in ("Tuples", "classes", "buses", "processes", "analyses", "matrices", "GPUs"):
        assert normalise_key(normalise_key(word)) == normalise_key(word)      # idempotent


def test_capitalised_common_noun_is_a_concept_not_a_person():
    result = ex.extract("Tuples are immutable sequences.")
    labels = {e.key: e.label for e in result.entities}
    assert labels.get("tuple") == "CONCEPT"
    names = ex.extract("Alice met Charles Babbage in London.")
    assert {e.key: e.label for e in names.entities}.get("charles babbage") == "PERSON"


def test_real_concepts_survive():
    keys = set(ex.extract("MCAS pushed the nose down. The Transformer replaced recurrence. "
                          "We minimise the loss with gradient descent.").keys)
    assert {"mcas", "transformer", "gradient descent"} <= keys


def test_chinese_junk_dropped_and_terms_kept():
    result = ex.extract("第三章介绍支持向量机。图5显示了神经网络的结构，见第12页和表3。本章的习题见附录。")
    keys = set(result.keys)
    assert {"支持向量机", "神经网络"} <= keys
    for junk in ("章", "节", "图", "表", "页", "第三章", "本章", "习题", "附录", "机是"):
        assert junk not in keys, (junk, keys)
    assert all(len(k) >= 2 for k in keys)
    fragment = ex.extract("支持向量机是一种分类器，决策树也是。")
    assert "支持向量机" in fragment.keys and not any(k.endswith("是") for k in fragment.keys)


def test_concept_heads_are_singular_without_spacys_lemma_quirks():
    keys = set(ex.extract("The factorial of a number multiplies every positive integer up to it. "
                          "Overfitting means a model memorises its training data. Lists hold memories.").keys)
    assert "training data" in keys and not any(k.endswith(("datum", "multiplie")) for k in keys), keys
    assert {"list", "memory"} <= keys, keys


def test_chinese_terms_are_not_cut_at_a_conjunction_or_a_dimension():
    keys = set(ex.extract("自注意力用查询向量和键向量计算。支持向量机把样本映射到高维空间中找超平面。").keys)
    assert {"键向量", "高维空间", "支持向量机", "超平面"} <= keys, keys
    assert not {"和键", "维空间"} & keys, keys


def test_chinese_url_pieces_dropped():
    keys = set(ex.extract("GitHub上的代码在www.github.com/abc，数据结构很重要。").keys)
    assert "数据结构" in keys
    assert not ({"www", "com"} & keys)
