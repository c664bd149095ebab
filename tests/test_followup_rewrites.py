"""A model's rewrite of a follow-up question, scripted by the loopback OpenAI-compatible server: searched only
when it is a question about the conversation, never when it answers or brings words of its own; and a word
only the rewrite brought is never "never mentioned in your documents"."""
from __future__ import annotations

import pytest

from assistant.facade import PDFLearningAssistant
from assistant.followup import own_words, rewrite_problem, standalone_question
from assistant.types import AskResult
from core.llm import get_llm
from core.settings import Settings
from rag.evidence import UNKNOWN_WORDS_MIN_CHUNKS
from rag.types import Answer

JOINED = "joined with the previous question"
REJECTED = JOINED + " (the model's rewrite was not a question about it"

SVM_EN = [{"role": "user", "content": "What is a soft margin in an SVM?"},
          {"role": "assistant", "content": "An SVM with a soft margin allows some samples to violate the margin, "
                                           "paying a penalty for each of them [1]."}]
SVM_ZH = [{"role": "user", "content": "什么是支持向量机？"},
          {"role": "assistant", "content": "支持向量机寻找间隔最大的划分超平面 [1]。软间隔允许部分样本不满足约束 [2]。"}]
RECURSION = [{"role": "user", "content": "Give me an example of recursion in Python."},
             {"role": "assistant", "content": "The factorial function calls itself until n reaches 0 [1]."}]


@pytest.fixture
def rewrites(llm_settings, fake_llm):
    """(ask, llm): ask(question, history, rewrite) -> (searched, how), the model replying `rewrite`."""
    llm = get_llm(llm_settings)

    def ask(question, history, rewrite):
        fake_llm.rewrite = rewrite
        try:
            return standalone_question(question, history, llm)
        finally:
            fake_llm.rewrite = None
    return ask


# -- which rewrites are searched -------------------------------------------------------------------------

def test_a_rewrite_that_answers_instead_of_asking_is_rejected_for_the_joined_question(rewrites, fake_llm):
    question = "那软间隔又是什么意思？"
    searched, how = rewrites(question, SVM_ZH, "软间隔允许部分样本不满足约束。[1]")
    assert searched == f"什么是支持向量机？ {question}" and how.startswith(REJECTED), how
    sent = [r for r in fake_llm.requests if "standalone question" in r["body"]["messages"][-1]["content"]]
    assert sent, "the model was asked to rewrite the question"
    # The same answer without its citation mark is still a statement, not a question.
    assert rewrites(question, SVM_ZH, "软间隔允许部分样本不满足约束。")[0] == f"什么是支持向量机？ {question}"
    # The 0.5B reply: an answer about kernels, over several clauses.
    kernels = "核函数把样本映射到高维空间，使其线性可分，从而可以用支持向量机划分，软间隔则允许误差。"
    assert rewrites(question, SVM_ZH, kernels)[1].startswith(REJECTED)
    # English, an answer in place of a question.
    searched, how = rewrites("What does it mean?", SVM_EN,
                             "A soft margin allows some samples to violate the margin. Each pays a penalty [1].")
    assert searched == "What is a soft margin in an SVM? What does it mean?" and how.startswith(REJECTED), how


def test_a_rewrite_adding_words_the_conversation_never_used_is_rejected(rewrites):
    question = "Can you show me the code for that example?"
    searched, how = rewrites(question, RECURSION, "Can you show me the code snippet for the recursion example?")
    assert searched == f"Give me an example of recursion in Python. {question}"
    assert how.startswith(REJECTED) and "snippet" in how, how
    # The model answering in another language than the conversation brings words it never used.
    assert rewrites("那软间隔又是什么意思？", SVM_ZH, "What does soft margin mean in SVMs?")[1].startswith(REJECTED)
    assert rewrites("那软间隔又是什么意思？", SVM_ZH, "软间隔与核技巧有什么区别？")[1].startswith(REJECTED)


def test_a_good_rewrite_is_searched_in_english_and_chinese(rewrites):
    assert rewrites("And what does it mean?", SVM_EN, "What does soft margin mean in SVMs?") == \
        ("What does soft margin mean in SVMs?", "rewritten by the LLM")
    assert rewrites("那软间隔又是什么意思？", SVM_ZH, "支持向量机中的软间隔是什么意思？") == \
        ("支持向量机中的软间隔是什么意思？", "rewritten by the LLM")
    # Words of the assistant's answer are the conversation's: "factorial" may resolve "that example".
    searched, how = rewrites("Can you show me the code for that example?", RECURSION,
                             "Can you show me the code for the factorial recursion example?")
    assert (searched, how) == ("Can you show me the code for the factorial recursion example?", "rewritten by the LLM")
    # A label, quotes or bold around the question are the model's wrapping, not its words.
    assert rewrites("那软间隔又是什么意思？", SVM_ZH, "改写后的问题：“软间隔是什么意思？”")[0] == "软间隔是什么意思？"
    # An imperative is a question too.
    assert rewrites("And what does it mean?", SVM_EN, "**Explain the soft margin of an SVM.**")[1] == "rewritten by the LLM"


def test_what_makes_a_rewrite_not_a_question_about_the_conversation():
    conv = [t["content"] for t in SVM_EN]
    before, question = conv[0], "And in practice?"
    assert rewrite_problem("What does the soft margin of an SVM mean in practice?", question, before, conv) is None
    assert "more than one line" in rewrite_problem("What is a soft margin?\nIt allows errors.", question, before, conv)
    assert "longer" in rewrite_problem("What is a soft margin " + "and a margin " * 20 + "?", question, before, conv)
    assert "not a question" in rewrite_problem("The soft margin of an SVM allows errors", question, before, conv)
    assert "clauses" in rewrite_problem("Why, when, how, and where is the soft margin?", question, before, conv)
    # An echo of "and in 2016?" resolves nothing: no word of the conversation's topic.
    assert "shares no word" in rewrite_problem("and in 2016?", "and in 2016?", "Revenue in 2017?", ["Revenue in 2017?"])
    # A capitalised abbreviation of the conversation's words is theirs; the same letters in lower case are not.
    aoa = ["What happens when the two angle of attack sensors disagree?"]
    assert rewrite_problem("Why do the AOA sensors disagree?", "and why?", aoa[0], aoa) is None
    assert "aoa" in rewrite_problem("Why do the aoa sensors disagree?", "and why?", aoa[0], aoa)


def test_a_question_that_stands_alone_is_never_sent_to_the_model(rewrites, fake_llm):
    fake_llm.requests.clear()
    assert rewrites("What is a kernel function?", SVM_EN, "Soft margin.") == ("What is a kernel function?", "as asked")
    assert not fake_llm.requests


def test_own_words_are_the_searched_words_the_person_wrote_in_any_form():
    history = [{"role": "user", "content": "Which snippets show recursion?"},
               {"role": "assistant", "content": "Typeclasses are not in your notes."}]
    words = own_words("And in Haskell?", history, "Which snippet shows recursion with typeclasses in Haskell?")
    assert {"snippets", "snippet", "shows", "recursion", "haskell"} <= words
    assert "typeclasses" not in words            # the assistant's word, brought by the rewrite


# -- end to end: a word only the rewrite added is never "never mentioned" ------------------------------------

TOPICS = ["lists", "tuples", "dictionaries", "strings", "loops", "functions", "classes", "files", "exceptions",
          "modules", "sets", "generators", "decorators", "iterators", "comprehensions", "slices"]
RECURSION_LESSON = ("# Recursion\n\nA recursive function calls itself. The factorial example shows recursion in "
                    "Python:\n\n```python\ndef factorial(n):\n    if n == 0:\n        return 1\n    return n * "
                    "factorial(n - 1)\n```\n\nEach call works on a smaller number until it reaches the base case.")


def lessons(n: int) -> str:
    """A long generated Python course: one short lesson a section, then the recursion lesson."""
    parts = [f"# Lesson {i + 1}: {t}\n\nLesson {i + 1} covers {t} in Python. The examples in this lesson show how "
             f"{t} behave when a program runs, and each example comes with its code and its output. Exercise {i + 1} "
             f"asks the reader to change the code of example {i + 1} and to explain the new output. The lesson ends "
             f"with a summary of {t} and a list of common mistakes with {t}."
             for i, t in ((i, TOPICS[i % len(TOPICS)]) for i in range(n))]
    return "\n\n".join(parts + [RECURSION_LESSON])


@pytest.fixture(scope="module")
def library(tmp_path_factory, fake_llm):
    """An assistant with the loopback model and a library long enough for the unknown-word rule."""
    fake_llm.reset()
    settings = Settings(_env_file=None, data_dir=tmp_path_factory.mktemp("followup") / "data",
                        openai_base_url=fake_llm.base_url, openai_api_key="test-key", llm_model="fake-model",
                        llm_timeout_s=2.0)
    assistant = PDFLearningAssistant("frank", settings)
    assistant.rag.add_text(lessons(UNKNOWN_WORDS_MIN_CHUNKS + 20), title="Python lessons", name="lessons.md")
    assert assistant.rag.store.term_document_counts("frank", ["python"])[0] >= UNKNOWN_WORDS_MIN_CHUNKS
    return assistant


def ask(assistant, fake_llm, question, history, rewrite) -> AskResult:
    fake_llm.reset()
    fake_llm.rewrite = rewrite
    try:
        result = assistant.ask_once(question, history)
    finally:
        fake_llm.rewrite = None
    return result


MONADS = [{"role": "user", "content": "What are monads in Haskell?"},
          {"role": "assistant", "content": "Monads wrap computations; typeclasses define what they can do."}]


def test_a_word_only_the_rewrite_added_is_never_called_unknown(library, fake_llm):
    rewrite = "Can you show me an example of monads and typeclasses in Haskell?"
    tool = library.rag
    # Asked as written, every word the library lacks is named: the rule is active in this library.
    direct = tool.ask(rewrite)
    assert direct.refused and "“typeclasses”" in direct.text and "“haskell”" in direct.text, direct.text
    # As the rewrite of a follow-up, "typeclasses" is the model's word (from the assistant's answer): the
    # refusal names the person's words only.
    result = ask(library, fake_llm, "Can you show me an example of them?", MONADS, rewrite)
    assert result.search_query == rewrite and result.refused, result
    assert "typeclasses" not in result.text.lower(), result.text
    assert "never mention" in result.text and "“monads”" in result.text and "“haskell”" in result.text, result.text
    # RAGTool takes the person's words directly, too.
    final = tool.ask(rewrite, own_words=frozenset({"monads"}))
    assert isinstance(final, Answer) and "typeclasses" not in final.text and "haskell" not in final.text, final.text


def test_a_rejected_rewrite_searches_the_joined_question(library, fake_llm):
    question = "Can you show me the code for that example?"
    result = ask(library, fake_llm, question, RECURSION, "Can you show me the code snippet for the recursion example?")
    assert result.search_query == f"Give me an example of recursion in Python. {question}"
    assert "snippet" not in result.text.lower(), result.text
    streamed = [r for r in fake_llm.requests if r["body"].get("stream")]
    assert not streamed or result.search_query in streamed[-1]["body"]["messages"][-1]["content"]
    # The Chinese answer in place of a question: the joined question is searched.
    zh = ask(library, fake_llm, "那软间隔又是什么意思？", SVM_ZH, "软间隔允许部分样本不满足约束。[1]")
    assert zh.search_query == "什么是支持向量机？ 那软间隔又是什么意思？"


def test_an_accepted_rewrite_is_searched_and_its_own_words_are_not_unknown(library, fake_llm):
    question = "Can you show me the code for that example?"
    history = [RECURSION[0], {"role": "assistant", "content": "Here is a snippet: factorial calls itself [1]."}]
    rewrite = "Can you show me the code snippet for the factorial recursion example?"
    result = ask(library, fake_llm, question, history, rewrite)
    assert result.search_query == rewrite
    assert "snippet" not in result.text.lower(), result.text    # the assistant's word, not the person's
    assert not result.refused and any("factorial" in (c.quote or "") for c in result.citations), result.text
