"""The support check (rag.support): does a passage back a sentence? Real embedders; the judge through a real
OpenAI-compatible server on loopback (tests/llm_server.py), which gives the YES/NO log-probabilities."""
from __future__ import annotations

import json

import pytest

from rag.support import check, clauses, negation_flipped, numbers_in

PYTHON = ("The modulus operator is more useful than it seems. For example, you can check whether one number is "
          "divisible by another. Also, you can extract the right-most digit or digits from a number. For example, "
          "x % 10 yields the right-most digit of x (in base 10). Similarly x % 100 yields the last two digits.")
LANGUAGES = ("Natural languages are the languages people speak, such as English, Spanish, and French. They were not "
             "designed by people; they evolved naturally.")
TUPLES = "A tuple is a sequence of values. The important difference is that tuples are immutable."
ALGORITHM = "“算法”是指从数据中学得“模型”的具体方法。“算法”产出的结果称为“模型”，通常是具体的函数。"
CLASSES = "当分类的类别只有两个时，称此类任务为“二分类”；当分类的类别超过两个时，称此类任务为“多分类”。"
RNN = "在 RNN 架构中，距离越远的输入之间的关系就越难被捕捉，同时 RNN 需要将整个序列读入内存依次计算。"
ICL = "上下文学习能力是由 GPT-3 首次引入的。"
ERRORS = "经验误差：学习器在训练集上的误差，又称为“训练误差”。 泛化误差：学习器在新样本上的误差。"
AOA = "The second design change alerts the pilots that the airplane's two AOA sensors are disagreeing by a certain amount."


@pytest.fixture(scope="module")
def embedders(tmp_path_factory):
    from core.embeddings import get_embedder, get_multilingual_embedder
    from core.settings import Settings
    from core.vectors import get_vector_store
    from rag.dense import DenseSpaces
    settings = Settings(_env_file=None, data_dir=tmp_path_factory.mktemp("support"), llm_backend="none")
    return DenseSpaces(get_vector_store(settings), "t", "support", get_embedder(settings),
                       get_multilingual_embedder(settings))


@pytest.mark.parametrize("sentence, passage", [
    ("Similarly x % 100 yields the last two digits.", PYTHON),                     # a copy
    ("x % 10 gives the right-most digit of x.", PYTHON),                           # shorter, same claim
    ("A tuple is a sequence of values, and tuples are immutable.", TUPLES),        # two sentences joined
    ("当分类的类别只有两个时，称此类任务为“二分类”。", CLASSES),
    ("经验误差也叫训练误差，泛化误差则是学习器在新样本上的误差。", ERRORS),             # 也叫 for 又称为
    ("The second design change alerts the pilots when the airplane's two AOA sensors disagree by a certain amount.",
     AOA),                                                                          # another form of the word
])
def test_what_the_passage_says_is_backed(sentence, passage, embedders):
    assert check(sentence, passage, embedders).supported


@pytest.mark.parametrize("sentence, passage, reason", [
    ("Similarly x % 100 yields the last three digits.", PYTHON, "number"),         # "three": not the passage's
    ("当分类的类别超过三个时，称此类任务为“多分类”。", CLASSES, "number"),              # 三个 ≠ 两个
    ("Natural languages were designed by people.", LANGUAGES, "negation"),          # the passage says not
    ("“模型”是指从数据中学得“算法”的具体方法。", ALGORITHM, "order"),                     # the two terms swapped
    ("The important difference is that tuples are mutable.", TUPLES, "opposite"),
    ("在 RNN 架构中，距离越远的输入之间的关系就越容易被捕捉。", RNN, "negation"),           # 越难 (hard) -> 越容易
    ("上下文学习能力是由 BERT 首次引入的。", ICL, "substituted"),                          # a wrong name
])
def test_a_near_copy_that_changes_one_thing_is_not_backed(sentence, passage, reason, embedders):
    verdict = check(sentence, passage, embedders)
    assert not verdict.supported and verdict.reason == reason, verdict


ASSIGNMENT = ("First, equality is a symmetric relationship and assignment is not. But in Python, the statement "
              "a = 7 is legal and 7 = a is not.")
UNPACKING = "The number of variables on the left and the number of values on the right have to be the same."
LORA = "LoRA 使用简单的线性设计，在部署时将可训练矩阵与冻结权重合并，不存在推理延迟。"
FEATURES = "与过滤式特征选择不考虑后续学习器不同, 包裹式特征选择直接把最终将要使用的学习器的性能作为特征子集的评价准则。"


@pytest.mark.parametrize("sentence, passage", [
    ("The number of variables on the left does not have to match the number of values on the right.", UNPACKING),
    ("Like equality in mathematics, assignment in Python is a symmetric relationship.", ASSIGNMENT),
    ("回归任务中标记的所有可能取值可以直接罗列出来。",
     "由于是连续型，因此标记的所有可能取值无法直接罗列，通常只有取值范围。"),
    ("递归划分时，离散属性通常可以重复使用。",
     "递归划分时每次选择一个属性作为划分依据，并且该属性通常不能重复使用（仅针对离散属性）。"),
])
def test_a_reworded_claim_negated_against_its_place_is_not_backed(sentence, passage, embedders):
    verdict = check(sentence, passage, embedders)
    assert not verdict.supported and verdict.reason == "negation", verdict


@pytest.mark.parametrize("sentence, passage", [
    ("In Python, a = 7 is legal but 7 = a is not.", ASSIGNMENT),          # the "not" of the place's other half
    ("包裹式特征选择把最终将要使用的学习器的性能作为特征子集的评价准则。", FEATURES),  # 不考虑 is about 过滤式
    ("部署时 LoRA 可以把可训练矩阵合并进冻结的权重里，因此推理不会变慢。", LORA),      # negated on both sides
    ("RNN 不擅长捕捉相隔很远的输入之间的关系。", RNN),                                  # 不擅长 says what 越难 says
    ("The FAA has to receive any comments on the proposed AD no later than September 21, 2020.",
     "DATES: The FAA must receive comments on this proposed AD by September 21, 2020."),   # "no later than" = by
    ("A deck has 52 cards.", "There are fifty-two cards in a deck."),
])
def test_a_negation_is_read_where_it_reaches(sentence, passage, embedders):
    assert check(sentence, passage, embedders).supported


def test_a_sentence_about_something_else_is_not_backed(embedders):
    verdict = check("Every instruction must be compiled to machine code before the program can start.", PYTHON,
                    embedders)
    assert not verdict.supported


def test_reading_a_claim():
    assert clauses("Lists are mutable; tuples are not.") == ["Lists are mutable", "tuples are not."]
    assert numbers_in("It takes three steps and 2.5 s on March 13") == {"3", "2.5", "13"}
    assert numbers_in("the two are equal, and 一般来说 一个模型") == set()       # a pronoun, 一个 = "a"
    assert numbers_in("分成两个子集，做 3 次") == {"2", "3"}
    assert numbers_in("fifty-two cards in thirteen ranks, twenty one days") == {"52", "13", "21"}
    assert negation_flipped("They were designed by people.", "They were not designed by people.") == ["∅/not"]
    assert negation_flipped("所有可能取值可以直接罗列", "所有可能取值无法直接罗列")
    assert not negation_flipped("the lack of an alert is not unsafe", "lacking an alert is not unsafe")
    assert not negation_flipped("这两种方法相同", "这两种方法不同")                     # 不同 is "different", no negation
    assert not negation_flipped("训练阶段没有用到标记信息", "训练阶段没用到标记信息")            # one negation each


def test_the_labelled_pairs_are_read_and_scored(tmp_path):
    from rag.support_eval import main
    pairs = tmp_path / "pairs.jsonl"
    rows = [{"id": "en-1", "lang": "en", "passage_lang": "en", "kind": "verbatim", "supported": True,
             "sentence": "Similarly x % 100 yields the last two digits.", "passage": PYTHON},
            {"id": "en-2", "lang": "en", "passage_lang": "en", "kind": "number", "supported": False,
             "sentence": "Similarly x % 100 yields the last three digits.", "passage": PYTHON}]
    pairs.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    result = main([str(pairs)])
    assert result["n"] == 2 and result["reject_precision"] == 1.0 and result["reject_recall"] == 1.0
    assert result["rejected_by_kind"] == {"number": "1/1", "verbatim": "0/1"} and result["judge"] == "none"


def test_the_judge_decides_what_the_word_checks_let_through(llm_settings, fake_llm, embedders):
    from core.llm import get_judge, get_llm
    endpoint = get_llm(llm_settings)
    judge = get_judge(llm_settings, endpoint)
    assert judge is endpoint                       # an endpoint judges its own answers
    claim = "A tuple is a sequence of values that cannot be changed."
    fake_llm.judgement = 0.9
    assert check(claim, TUPLES, embedders, judge).supported
    fake_llm.judgement = 0.1
    verdict = check(claim, TUPLES, embedders, judge)
    assert not verdict.supported and verdict.reason == "judge"
    asked = [r["body"] for r in fake_llm.requests if r["body"].get("logprobs")]
    assert asked and "Statement:\nA tuple is a sequence" in asked[-1]["messages"][-1]["content"]
    fake_llm.judgement = None                      # an endpoint without log-probabilities: the words decide
    assert check(claim, TUPLES, embedders, judge).supported
    # a number the passage does not have is rejected before any judge is asked
    before = len(fake_llm.requests)
    assert check("A tuple holds 3 values.", TUPLES, embedders, judge).reason == "number"
    assert len(fake_llm.requests) == before


def test_a_sentence_the_words_do_not_back_needs_a_surer_yes_from_the_judge(llm_settings, fake_llm, embedders):
    """The judge leans to yes over a passage's topic with a use added ("This makes programming particularly useful
    for analysing large data sets …", 0.54): what the words and meaning do not back is kept only on a yes of
    UNBACKED_JUDGE_YES; what they back stays on the same lukewarm yes."""
    from core.llm import get_judge, get_llm
    from rag.support import UNBACKED_JUDGE_YES
    judge = get_judge(llm_settings, get_llm(llm_settings))
    added = "This makes tuples particularly useful for analysing large data sets and building web applications."
    backed = "A tuple is a sequence of values that cannot be changed."
    assert check(added, TUPLES, embedders).reason == "unbacked"        # words and meaning alone
    assert check(backed, TUPLES, embedders).supported
    fake_llm.judgement = UNBACKED_JUDGE_YES - 0.05                     # a yes the old threshold took
    verdict = check(added, TUPLES, embedders, judge)
    assert not verdict.supported and verdict.reason == "judge", verdict
    assert check(backed, TUPLES, embedders, judge).supported
    fake_llm.judgement = UNBACKED_JUDGE_YES + 0.05
    assert check(added, TUPLES, embedders, judge).supported


def test_a_composed_sentence_the_judge_rejects_is_left_out(llm_settings, fake_llm):
    from rag.tool import RAGTool
    from rag.types import Answer
    tool = RAGTool("judged", llm_settings)
    tool.add_text("# Tuples\n\n" + TUPLES + " Tuples can be used as dictionary keys.\n", title="tuples")
    fake_llm.answer = "A tuple is a sequence of values [1]. Tuples can be used as dictionary keys [1]."
    fake_llm.judgement = 0.05                      # the judge says the passage states neither
    answer = [item for item in tool.ask_stream("What is a tuple?") if isinstance(item, Answer)][0]
    assert "Tuples can be used as dictionary keys [1]." not in answer.text.split("\n\n")[0]
    assert any(getattr(n, "key", "") in ("notice_dropped", "notice_all_unsupported") for n in answer.notices)
    fake_llm.judgement = 0.95
    answer = [item for item in tool.ask_stream("What is a tuple?") if isinstance(item, Answer)][0]
    assert answer.text.startswith("A tuple is a sequence of values [1]. Tuples can be used as dictionary keys [1].")


def test_negations_are_counted_in_both_languages():
    from rag.support import negation_count
    assert negation_count("它的泛化错误率不超过贝叶斯最优分类器的两倍，然而这是一个没啥实际用途的结论") == 2
    assert negation_count("its error rate exceeds the Bayes optimal classifier's by two times") == 0
    assert negation_count("不仅懂得多，还能跑腿办事，这两种方法不同") == 0
    assert negation_count("学习向量量化也是无监督聚类的一种方式") == 0                  # 无监督: "unsupervised"
    assert negation_count("It not only knows a lot; it isn't always right, and never without help.") == 3


def test_the_judge_threshold_sweep_moves_only_what_the_judge_decided():
    from rag.support_eval import threshold_sweep
    unsupported = {"id": "en-1", "supported": False}
    supported = {"id": "en-2", "supported": True}
    rows = [(unsupported, True), (supported, False), (dict(unsupported, id="en-3"), False)]
    judged = [None, 0.35, 0.2]          # the first was rejected by a rule: it stays rejected at every threshold
    by_threshold = {line["judge_rejects_at"]: line for line in threshold_sweep(rows, judged)}
    assert by_threshold[0.6]["reject_precision"] == 0.6667 and by_threshold[0.6]["reject_recall"] == 1.0
    assert by_threshold[0.7]["reject_precision"] == 1.0 and by_threshold[0.7]["reject_recall"] == 1.0
    assert by_threshold[0.9]["reject_recall"] == 0.5
    assert by_threshold[0.9]["odd"]["n"] == 2 and by_threshold[0.9]["even"]["n"] == 1


@pytest.mark.parametrize("translation, holds", [
    ("Overfitting is when the learner takes the training samples' own traits as general properties of all "
     "samples, so generalization performance drops.", True),
    ("Overfitting means the learner treats traits of the training samples as general properties of all samples.",
     True),
    ("A Python list can be sorted in place with its sort method.", False),              # another passage's meaning
    ("The decision tree splits the data set recursively.", False),
    ("Overfitting happens when a model has more than 100 parameters.", False),          # a number it never gives
    ("Overfitting is when the learner does not take the training samples' own traits as general properties.",
     False),                                                                            # a negation it never says
])
def test_a_translation_of_a_passage_holds_by_its_meaning_across_languages(embedders, translation, holds):
    """Faithful renderings score 0.26-0.35 on the same-language scale the composed-sentence check reads across
    languages (all rejected); a translation is read on the cross-language scale (faithful 0.90-0.95, unrelated
    0.60-0.61)."""
    from rag.translated_lead import translation_holds
    source = "过拟合是指学习器把训练样本自身的特点当作所有样本的一般性质，导致泛化性能下降。"
    assert translation_holds(translation, source, embedders) is holds


GLM = "不过，在 ChatGLM2 中，模型架构就基本回归了 LLaMA 架构，引入 MQA 的注意力机制，预训练任务也回归经典的 CLM，放弃了 GLM 的失败尝试。"


@pytest.mark.parametrize("sentence, half", [
    ("The model architecture was basic回归 of LLaMA 架构, introduced MQA's attention mechanism, pre-training task "
     "also回归经典的 CLM,放弃了 GLM's failure try.", True),     # the 0.5B model's half-translation of GLM
    ("ChatGLM2 went back to the LLaMA 架构 and the classic CLM 目标.", True),
    ("ChatGLM2 went back to the LLaMA architecture and gave up the GLM objective (GLM 的失败尝试).", False),
    ("The book calls this 梯度下降 and it is used for the loss.", False),          # one term, named
    ("Transformer 的每一个 Encoder 由 12 个 Encoder Layer 组成。", False),          # Chinese quoting English terms
    ("ChatGLM2 基本回归了 LLaMA 架构，预训练任务也回归经典的 CLM。", False),
])
def test_a_half_translated_sentence_is_not_backed(sentence, half, embedders):
    from rag.support import half_translated
    assert half_translated(sentence) is half
    verdict = check(sentence, GLM, embedders)
    assert (verdict.reason == "mixed") is half, verdict
    if half:
        assert not verdict.supported


HISTORY = ("随着计算机算力的不断提升，以及 2012 年 Hinton 和他的学生提出了 AlexNet 并在 ImageNet 评测中以明显优于第二名的成绩夺冠后，"
           "引起了学术界和工业界的广泛关注，紧接着三位深度学习之父 LeCun、Bengio 和 Hinton 在 2015 年正式提出深度学习的概念。")
VERSIONS = ("There are two versions of Python, called Python 2 and Python 3. This book is written for Python 3, but I "
            "include some notes about Python 2.")
ORDER = ("On March 13, 2019, the FAA issued an Emergency Order of Prohibition, which prohibits the operation of Boeing "
         "Model 737–8 and 737–9 airplanes by U.S.-certificated operators or in U.S. territory.")


@pytest.mark.parametrize("sentence, passage, misplaced", [
    ("2015 年 Hinton 和他的学生提出了 AlexNet 并在 ImageNet 评测中夺冠。", HISTORY, ["2015"]),   # the sentence's other year
    ("This book is written for Python 2.", VERSIONS, ["2"]),
    ("2012 年 Hinton 和他的学生提出了 AlexNet 并在 ImageNet 评测中夺冠。", HISTORY, []),
    # the date is a phrase of its own ("On March 13, 2019, …"): the phrase the claim matches states no other number
    ("An FAA emergency order issued on March 13, 2019 bans the 737–8 and 737–9 from U.S. territory.", ORDER, []),
])
def test_a_number_is_read_where_the_passage_states_the_claim(sentence, passage, misplaced, embedders):
    verdict = check(sentence, passage, embedders)
    if misplaced:
        assert not verdict.supported and verdict.reason == "number" and verdict.details["numbers"] == misplaced, verdict
    else:
        assert verdict.reason != "number", verdict


def test_the_installed_judge_is_the_bigger_model_and_catches_an_added_detail(local_model_dir, embedders, tmp_path):
    """`make install` installs the 1.5B model, and with SUPPORT_JUDGE=auto it judges what the rules let through:
    an invented remedy added to a sentence the passage states (the words all fit; only a reader of the claim
    sees it), while the passage's own claim is kept."""
    from core.llm import LocalLLM, get_judge
    from core.settings import Settings
    judge = get_judge(Settings(_env_file=None, data_dir=tmp_path, llm_model_dir=local_model_dir))
    assert isinstance(judge, LocalLLM) and judge.model.startswith("Qwen2.5-Coder-1.5B-Instruct")
    passage = "过拟合是由于模型的学习能力相对于数据来说过于强大，反过来说，欠拟合是因为模型的学习能力相对于数据来说过于低下。"
    invented = "过拟合是由于模型的学习能力相对于数据来说过于强大，通常可以通过增大学习率来缓解。"
    assert check(invented, passage, embedders).supported          # the rules alone let it through
    verdict = check(invented, passage, embedders, judge)
    assert not verdict.supported and verdict.reason == "judge", verdict
    assert check("欠拟合是因为模型的学习能力相对于数据来说过于低下。", passage, embedders, judge).supported
    # a sentence sharing no word or meaning with its passage is left out before the judge is asked (the 1.5B
    # model said yes, 0.53, to a how-to's first step the 0.5B model wrote over a passage on redirections)
    redirections = ("For example, the command ls > dirlist 2>&1 directs both standard output (file descriptor 1) and "
                    "standard error (file descriptor 2) to the file dirlist, while the command ls 2>&1 > dirlist "
                    "directs only the standard output to file dirlist.")
    unrelated = check("Open your terminal.", redirections, embedders, judge)
    assert not unrelated.supported and unrelated.reason == "unrelated" and "p_yes" not in unrelated.details, unrelated
    assert check("The command ls > dirlist 2>&1 sends both standard output and standard error to dirlist.",
                 redirections, embedders, judge).supported
