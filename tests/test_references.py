"""A chapter's reference list is never evidence (rag.references): its paper titles hold the words a learner
asks with, and an answer made from one is a paper title passed off as an explanation."""
from __future__ import annotations

import pytest

from rag.evidence import is_front_matter
from rag.references import is_reference_list
from rag.types import Chunk, SearchHit

# the pumpkin book's chapter 8 references, as MarkItDown gives them (one block, entries marked [n])
PUMPKIN = ("[1] Jerome Friedman, Trevor Hastie, and Robert Tibshirani. Additive logistic regression: a statistical "
           "view of boosting. The annals of statistics, 28(2):337–407, 2000. [2] 李航. 统计学习方法. 清华大学出版社, "
           "2012. [3] Zhi-Hua Zhou and Ji Feng. Deep forest: Towards an alternative to deep neural networks. In IJCAI, "
           "pages 3553–3559, 2017. [4] 朱德通孙文瑜, 徐成贤. 最优化方法. 最优化方法, 2010. [5] Jerome H Friedman. Greedy "
           "function approximation: a gradient boosting machine. Annals of statistics, pages 1189–1232, 2001.")
HAPPY_LLM = ("**参考资料**\n\n[1] Long Ouyang, Jeff Wu, Xu Jiang. (2022). *Training language models to follow "
             "instructions with human feedback.* arXiv preprint arXiv:2203.02155.\n[2] Jacob Devlin, Ming-Wei Chang. "
             "(2019). *BERT: Pre-training of Deep Bidirectional Transformers.* arXiv preprint arXiv:1810.04805.\n"
             "[3] Tom B. Brown et al. (2020). Language Models are Few-Shot Learners. arXiv preprint arXiv:2005.14165.")


@pytest.mark.parametrize("text, listed", [
    (PUMPKIN, True),
    (HAPPY_LLM, True),
    # a passage that cites a paper or names years is the book explaining
    ("GPT-3 was introduced in 2020 (Brown et al., 2020). It has 175 billion parameters and showed in-context "
     "learning. The paper appeared at NeurIPS 2020, pages 1877-1901. ChatGPT in 2022 added RLHF.", False),
    ("Python 2 was released in 2000 and Python 3 in 2008. This book uses Python 3. Chapter 2 explains variables.",
     False),
    ("对数几率回归的损失函数是凸函数，因为其海森矩阵半正定 [1]。参见周志华《机器学习》，清华大学出版社，2016。", False),
])
def test_a_reference_list_is_told_from_a_passage_that_cites(text, listed):
    assert is_reference_list(text) is listed


def test_a_reference_list_is_never_evidence_whatever_its_heading():
    def hit(text: str, heading: list[str]) -> SearchHit:
        chunk = Chunk("d:1", "d", 1, text, heading, 109, 109, 0, len(text), 100)
        return SearchHit(chunk=chunk, doc_name="pumpkin_book.pdf", doc_title="南瓜书", score=1.0, rank=1)
    assert is_front_matter(hit(PUMPKIN, ["第 8 章 集成学习", "8.4 随机森林"]))     # a guessed heading above it
    assert is_front_matter(hit("Some text.", ["参考资料"]))
    assert not is_front_matter(hit("随机森林是 Bagging 的一个扩展变体。它在以决策树为基学习器构建 Bagging 集成的基础上引入了随机属性选择。",
                                   ["第 8 章 集成学习"]))


def test_prose_with_years_and_publishing_words_is_not_a_reference_list():
    """A filing's segment lines (a year, "volume", "press", "journal entries") are the document, not citations."""
    lines = "\n".join(f"Segment {n} revenue in 2017 moved with pricing, volume and the cost of software; the press "
                      f"release and journal entries of 2016 were restated." for n in range(1, 9))
    assert not is_reference_list(lines)


def test_a_contents_line_is_never_evidence_whatever_its_length():
    """The tail of a contents page in a chunk of its own (too few lines to be told as front matter): its lines
    split at the dots ("72 E.3 Optimal LP solution . . . . . ." with the next line's page number) are contents,
    not an answer about the solution."""
    from rag.evidence import score_evidence
    contents = ("E.2 Generated LP problem instance . . . . . . . . . . . . . . . . . . . . . 72\n"
                "E.3 Optimal LP solution of the transportation problem . . . . . . . . . . . . . . . . . . . 72\n\n"
                "Acknowledgements 74")
    solution = "The optimal solution of the transportation problem has a total cost of 153.675."
    hits = [SearchHit(chunk=Chunk(f"d:{n}", "d", n, text, heading, page, page, 0, len(text), 60), doc_name="gmpl.pdf",
                      doc_title="MathProg", score=1.0, rank=n)
            for n, (text, heading, page) in enumerate([(contents, [], 5), (solution, ["E.3 Optimal LP solution"], 72)])]
    shown = [ev.unit.text for ev in score_evidence("What is the optimal solution of the transportation problem?",
                                                   hits, None, {})]
    assert any("153.675" in t for t in shown)
    assert not any(". . . . ." in t for t in shown)
