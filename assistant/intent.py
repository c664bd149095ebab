"""Which store answers a question: the person's documents, or their own learning history (memory).

"What did I study yesterday?" must be answered from memory, "What did the study find?" from the
documents. Word lists cannot tell these apart, so the router compares the question's embedding with
labelled example questions (nearest-neighbour vote over both classes, English and Chinese), and uses
structural cues only to adjust the margin: a question about one's own past refers to the speaker
("I", "my", 我), often names a past time ("yesterday", "上周"), and reports the speaker's own study
("did I read", 我…问过); a request that names the book ("the book", "chapter 3", 书里, 第三章) is about
the documents even when it says "I want" or 我想/帮我. When an LLM is configured and the embedding vote
is close, an endpoint LLM classifies the question (one word), falling back to the vote; the small packaged
local model is not asked (it routes worse than the vote).

The examples are data (below), so the router is extended by adding phrasings, not rules.
"""
from __future__ import annotations

import logging
import math
import re
import threading
from dataclasses import dataclass

import numpy as np

from assistant import prompts
from core.nlp import skeleton, skeletons

log = logging.getLogger(__name__)

MEMORY, DOCUMENTS = "memory", "documents"

MEMORY_EXAMPLES = [
    "What did I study yesterday?", "What have I learned so far?", "Which documents did I read last week?",
    "What questions did I ask earlier?", "What did I ask you about before?", "Summarize my learning progress.",
    "What notes have I written?", "Remind me what I noted about this topic.", "What was I working on this morning?",
    "Show me my study history.", "Did I already ask about this?", "What topics have I covered recently?",
    "Tell me what I asked yesterday about this.", "What did I ask about last time?",
    "Which files have I uploaded?", "What did I read today?", "What have I been studying this week?",
    "List the concepts I have learned.", "What did I write in my notes about it?", "When did I last study this?",
    "How many questions have I asked?", "What was my last question?", "Recap my previous session.",
    "What do you remember about me?", "What are my preferences?",
    "What did I ask yesterday about the sensor?", "Did I take notes on functions?",
    "Have I read anything about flight control?", "What did I note about compliance costs?",
    "Which questions did I ask about the algorithm?", "Did I study the requirements already?",
    "我昨天学了什么？", "我之前问过哪些问题？", "我的笔记里写了什么？", "我最近读了哪些文档？", "总结一下我的学习进度。",
    "我上次问了什么？", "我今天学习了哪些内容？", "我记过关于这个的笔记吗？", "我学过哪些概念？", "回顾一下我上次的学习。",
    "我问过关于函数的问题吗？", "我看过关于飞行控制的文档吗？", "我上传过哪些文件？",
    "Which of my notes talk about the engine?", "Find the notes I wrote on inflation.",
    "What did I mark as important in the last chapter I read?", "How many documents have I studied?",
    "我刚刚看的是哪个文件？", "我一共记了几条笔记？", "我问了多少个问题了？", "我的笔记里有关于发动机的内容吗？",
    "我读到第几章了？", "帮我回顾一下我最近学的东西。",
    "我读第二章的时候记了哪些笔记？", "What did I note while I was reading chapter 2?",
]

DOCUMENT_EXAMPLES = [
    "What does the document say about the sensor?", "Explain how the flight control law works.",
    "What is a function in Python?", "Summarize chapter two.", "Define the term airworthiness directive.",
    "How much does compliance cost?", "What are the proposed design changes?", "List the requirements in section 3.",
    "Why was the emergency order issued?", "Who is affected by this rule?",
    "What is the difference between a list and a tuple?", "What did the study find?",
    "What did the authors conclude?", "What did the researchers learn from the experiment?",
    "What did the company change in the software?", "When is the deadline for comments?",
    "What should I do if the sensor fails?", "How do I define a recursive function?",
    "Can I use a loop to repeat the statements?", "What about the second one?", "And the other one?",
    "Give me an example from the text.", "What does the report recommend?", "Which airplanes are affected?",
    "What is MCAS?", "How does the algorithm work?", "Summarize the main points of this paper.",
    "这份文件关于传感器说了什么？", "什么是函数？", "解释一下飞行控制律。", "第二章的主要内容是什么？", "合规成本是多少？",
    "这个规定什么时候生效？", "递归函数怎么定义？", "文中提到了哪些要求？", "作者的结论是什么？",
    "我应该如何定义函数？", "我该怎么处理传感器故障？", "我需要满足哪些要求？",
    "How should I submit a comment?", "Where can I find the service information?",
    # First-person requests about the content are document questions: "I want to know…", "help me…",
    # 我想…, 帮我… name the speaker but ask about the book, not about the speaker's past.
    "I want to know what this section is about.", "Help me understand how interest rates affect inflation.",
    "I don't get what this paragraph means.", "I'm confused about Newton's third law.",
    "Can you show me how to sort a list?", "I'd like to understand the main argument of the paper.",
    "Help me compare these two methods.", "My textbook says energy is conserved; what does that mean?",
    "If I want to read a CSV file, how does the book do it?", "Walk me through this example step by step.",
    "I need a summary of the last section.", "Teach me what a chemical bond is.",
    "我想知道这一节讲的是什么。", "帮我梳理一下这部分的思路。", "我想了解供需关系是怎么决定价格的。",
    "我不太明白这个公式的含义。", "我想学怎么用字典存储数据。", "请帮我总结这篇文章的要点。",
    "书里是怎么解释通货膨胀的？", "给我讲讲牛顿第二定律。", "我该怎么计算加速度？",
    "如果我想给列表排序，书里是怎么写的？", "帮我解释一下这个术语。", "我不懂这段话是什么意思，能解释一下吗？",
    "请给我举个例子。", "我想弄懂化学键是怎么形成的。", "帮我比较一下这两种方法。",
    "我想写一个循环，书上有示例吗？", "课本里说能量守恒，这句话怎么理解？", "帮我列一下第一章的重点。",
    "我对这一章的结论有疑问，能帮我解读吗？",
    # building or doing something oneself, with the book as the guide
    "I want to build a small search engine myself; what parts do I need?", "I'd like to set up a simple web server, where do I start?",
    "我想自己实现一个简单的分类器，需要哪些步骤？", "我打算动手做一个推荐系统，要准备哪些组件？", "我要自己训练一个小模型，流程是什么？",
    # "learning" inside a topic's name (机器学习, reinforcement learning) is no sign of the person's learning
    "Give me an overview of how reinforcement learning works.", "What is the difference between online and batch learning?",
    "深度学习和强化学习有什么不同？", "给我介绍一下迁移学习。", "请帮我概述一下这场战争的背景。", "帮我简单介绍一下宏观经济学的基本问题。",
    "请帮我简要说明这个事件的起因。", "请帮我概括这个理论的来龙去脉。",
    # what a program or system the book teaches does with the person's own work: "my stuff", "my files",
    # 我的文件 are the subject of a how-it-works question, not records of the person's study
    "When I close the program and choose to save, where do my files end up?",
    "What happens to my variables when I exit the session?", "Where does the editor keep my settings?",
    "If my disk is full, what should I delete first?", "How do I get my deleted file back?",
    "我退出程序的时候选了保存，我的数据存到哪里去了？", "我的硬盘快满了，该删哪些东西？", "我误删了文件，还能恢复吗？",
    "我的程序运行到一半卡住了，怎么排查？",
    # "how do I get / make …": a how-to with the speaker as the one doing it
    "How do I get the system to show its startup messages?", "How do I make my laptop sleep when I close the lid?",
    "how do i get my script to print the whole error?", "我想让电脑开机时自动挂载我的硬盘，怎么设置？",
    "我想让自己的账号不用输密码就能登录，要怎么配？",
    # the speaker as the one who acts, in a clause of time or condition: what the system does then
    "Which settings does the editor load when I start it?", "What happens if I close the window without saving?",
    "我启动程序的时候它会先读哪些配置？", "如果我不保存就关掉窗口会怎样？",
]

_FIRST_PERSON = re.compile(r"\b(i|me|my|mine|myself|i've|i'm|i'd|we|our|us)\b|我|咱", re.IGNORECASE)
_PAST_TIME = re.compile(
    r"\b(yesterday|earlier|before|previously|last (?:time|week|month|session|night)|ago|so far|recently|"
    r"this (?:morning|week|month)|today)\b|昨天|昨晚|前天|前几天|这几天|上周|这周|本周|上个月|这个月|之前|以前|"
    r"上次|上一次|最后一次|最近|今天|早上|刚才|刚刚",
    re.IGNORECASE)

# Two cues the embedding vote cannot see. Each is a word or two in a sentence otherwise alike, and the
# skeleton vote masks the noun that carries it ("what does my textbook say" -> "what does my something
# say", the form of "what does my note say"). The embedding model (MiniLM) knows English only: on Chinese
# its votes for book requests (我想知道…, 帮我…) and for questions about one's past (我上次学到哪里了)
# overlap, so the words below do what the vote cannot.
# - The speaker reports their own past study: a first-person subject with a past form of a verb of
#   studying ("did I", "have I", "I've read", "I asked", 我…学过, 我…问了, 我…看过, 我…读到) or their own
#   records ("my notes", 我的笔记). A wish or a need ("I want to learn", 我想学, 我该怎么…) is a request
#   about the content, not a past activity, so 想/要/该/需 between 我 and the verb break the match; so are
#   "I have a question" (no verb of studying), 我看到书里说… ("I saw that the book says"; but 看到哪里 /
#   看到第几章 is how far one has read) and 我写了一个函数 (one's own code, not one's study record).
_OWN_PAST = re.compile(
    r"\b(?:did|have|had|was|were)\s+(?:i|we)\b|"
    r"\b(?:i|we)(?:'ve|'d| have| had)\s+(?:already\s+|ever\s+|just\s+|been\s+)?(?:studied|studying|asked|"
    r"asking|noted|learned|learnt|learning|read|reading|reviewed|reviewing|uploaded|covered|finished|"
    r"highlighted|looked|gone|taken|spent|worked|working)\b|"
    r"\b(?:i|we)\s+(?:already\s+|last\s+|ever\s+|just\s+)?(?:studied|asked|noted|learned|learnt|reviewed|"
    r"uploaded|covered|finished|highlighted|looked up|went over)\b|"
    r"\bnotes?\s+(?:that\s+)?(?:i|we)\s+(?:made|took|wrote|kept|saved)\b|"
    r"\bmy\s+(?:notes?|progress|history|study history|learning|(?:last|previous|past) (?:session|questions?)|"
    r"questions)\b|"
    r"我[^，。？！,.?!想要该需]{0,8}?(?:(?:学|问|记|读|复习|学习|上传|浏览)(?:了|过|到|完|下)|看(?:了|过|完|到(?=哪|第几)))|"
    r"我[^，。？！,.?!想要该需]{0,8}?(?:写|做|记)(?:过|了|下)?的?[^，。？！,.?!]{0,12}笔记|"
    r"我(?:的)?(?:笔记|学习(?:进度|记录|历史|情况)|进度|提问|历史)|我记的|我[^，。？！,.?!想要该需]{0,12}的笔记",
    re.IGNORECASE)
# - The question names the book or a part of it ("the book", "my textbook", "chapter 3", "according to
#   the text", 书里, 课本, 第三章, 这一节, 作者): it asks about the documents.
# A question with both ("which chapters did I read", 我之前看过第三章吗, 我学了列表，书里怎么讲切片) is
# left to the vote and the past-time cue.
_BOOK_REFERENCE = re.compile(
    r"\b(?:the|this|that|my|your|our)\s+(?:book|textbook|text|chapter|section|author|paper|article|document|"
    r"report|passage|paragraph|manual|handbook|guide|reference|tutorial)s?\b|\bchapter\s+(?:\d+|[ivx]+|one|two|three|four|five|six|seven|eight|nine|ten)\b|"
    r"\bsection\s+\d|\baccording to\b|"
    r"书里|书中|书上|课本|教材|教科书|本书|这本书|文中|原文|作者|手册|指南|教程|第[一二三四五六七八九十百\d]+[章节]|"
    r"这一?[章节]|这一?段(?!时间|日子)|本章|本节",
    re.IGNORECASE)

# - The speaker appears only as the one who does something in a clause of time or condition ("which files does
#   bash read when I log in?", "what happens if I press Ctrl-C", 我登录的时候…, 如果我…): the question asks what a
#   system does then, not what the speaker did. Alone (without a report of their own past or a past time) it
#   counts as a question about the documents, as naming the book does.
_SPEAKER_AS_ACTOR = re.compile(
    r"\b(?:when|whenever|if|once|after|before|while|until|each time|every time)\s+(?:i|we)\s+(?!did\b|have\b|had\b)|"
    r"(?:当|如果|要是|假如|假设|一旦|每次|每当)我|我[^，。？！,.?!]{1,12}的时候(?!问|学|看|记|读)",
    re.IGNORECASE)

# - The speaker states a wish or a plan ("I want to install it on a USB stick", 我想装在 U 盘上, 我打算…): what they
#   mean to do next, which the book tells them how; their past study is reported, not wished for. Alone (without a
#   report of their own past or a past time) it counts as a question about the documents: "便携安装（portable）是个啥？
#   我想装在 U 盘上带着走" went to the learning history, whose English-only vote reads Chinese poorly.
_SPEAKER_WISHES = re.compile(
    r"\b(?:i|we)\s+(?:(?:really\s+|just\s+)?(?:want|wanna|need|plan|hope|intend)|would like|am trying|am going)\b|"
    r"\b(?:i|we)['’](?:d like|m trying|m going|m planning)\b|我(?:很|真|就|只)?(?:想|打算|希望|准备|计划)",
    re.IGNORECASE)

# - The speaker asks how to do something, now ("how do i write sharps and flats", "how can we …", 我该怎么…): the
#   book's instructions, never their own past ("how did I …" is). The English-only vote put "how do i write sharps
#   and flats in lilypond?" nearer "what did I write …" than any book request (margin 0.04–0.11).
_ASKS_HOW = re.compile(
    r"\bhow\s+(?:do|can|should|could|would|to)\s+(?:i|we)?\b|\bhow\s+to\b|"
    r"我们?(?:该|要|应该|应当|能|可以)?(?:怎么|怎样|如何)(?:才能|才可以|去|来)?(?=[\u4e00-\u9fffA-Za-z\\])(?!了|回事|学|复习)",
    re.IGNORECASE)

# The vote margin (memory minus documents: mean cosine of the 3 nearest examples of each class) a
# first-person question needs to count as about memory: lower when it names a past time, lower still
# when it reports the speaker's own past study, higher when it names the book (one cue without the other).
MARGIN = 0.02
MARGIN_WITH_TIME = -0.03
MARGIN_OWN_PAST = -0.06
MARGIN_BOOK = 0.08
AMBIGUOUS = 0.06       # |margin - threshold| below this asks the LLM, when there is one


@dataclass
class IntentDecision:
    intent: str                  # MEMORY | DOCUMENTS
    margin: float                # memory score minus documents score (embedding vote)
    first_person: bool
    past_time: bool
    method: str                  # "embedding" | "llm" | "empty"

    @property
    def is_memory(self) -> bool:
        return self.intent == MEMORY


# The example embeddings, once per embedding model and process: routers differ by LLM (one per
# assistant with an LLM), the examples only by the model that embeds them.
_EXAMPLES: dict[str, tuple[np.ndarray, ...]] = {}
_EXAMPLES_LOCK = threading.Lock()


class IntentRouter:
    """Classify questions; the example embeddings are computed once per embedding model."""

    def __init__(self, embedder, llm=None):
        self.embedder = embedder
        self.llm = llm

    def _example_vectors(self) -> tuple[np.ndarray, ...]:
        with _EXAMPLES_LOCK:
            key = self.embedder.model_id
            if key not in _EXAMPLES:
                n = len(MEMORY_EXAMPLES)
                full = self.embedder.embed(MEMORY_EXAMPLES + DOCUMENT_EXAMPLES, kind="query")
                skel = self.embedder.embed(skeletons(MEMORY_EXAMPLES + DOCUMENT_EXAMPLES), kind="query")
                _EXAMPLES[key] = (full[:n], full[n:], skel[:n], skel[n:])
            return _EXAMPLES[key]

    def vote(self, question: str) -> float:
        """Mean of two votes: on the question as written, and on its skeleton (nouns masked), so the
        topic ("sensors") does not outvote the form ("what did I ask yesterday about …")."""
        mem, doc, mem_s, doc_s = self._example_vectors()
        q, q_s = self.embedder.embed([question, skeleton(question)], kind="query")
        top = lambda sims: float(np.sort(sims)[-3:].mean())  # noqa: E731
        return ((top(mem @ q) - top(doc @ q)) + (top(mem_s @ q_s) - top(doc_s @ q_s))) / 2

    def classify(self, question: str) -> IntentDecision:
        question = (question or "").strip()
        if not question:
            return IntentDecision(DOCUMENTS, 0.0, False, False, "empty")
        first_person = bool(_FIRST_PERSON.search(question))
        past_time = bool(_PAST_TIME.search(question))
        margin = self.vote(question)
        threshold = self.threshold(question, past_time)
        # A question about one's own past refers to oneself; without that it is about the documents.
        intent = MEMORY if first_person and margin > threshold else DOCUMENTS
        method = "embedding"
        # Only a model that reads a question well is asked: the packaged 0.5B one sent "我不太懂梯度下降法的思路，
        # 南瓜书是怎么解释的？" to the learning history (learner_zh, with the local model).
        asks_model = self.llm is not None and not getattr(self.llm, "is_local", False)
        if asks_model and first_person and abs(margin - threshold) < AMBIGUOUS:
            verdict = self._ask_llm(question)
            if verdict:
                intent, method = verdict, "llm"
        return IntentDecision(intent, round(margin, 4), first_person, past_time, method)

    @staticmethod
    def threshold(question: str, past_time: bool) -> float:
        """The margin a first-person question needs to go to memory, by its structural cues."""
        own_past = bool(_OWN_PAST.search(question))
        # the speaker acting in a clause of time or condition, or wishing, but not at a past time ("我昨天登录的时候")
        # a wish about one's own records ("我想看看我的笔记") is still about them
        book = bool(_BOOK_REFERENCE.search(question)) or (not past_time and (
            bool(_SPEAKER_AS_ACTOR.search(question)) or (bool(_SPEAKER_WISHES.search(question)) and not own_past)))
        if own_past and not book:
            return MARGIN_OWN_PAST
        if not own_past and not past_time and _ASKS_HOW.search(question):
            return math.inf          # how to do something: the book's instructions, whatever the vote
        if book and not own_past:
            return MARGIN_BOOK
        return MARGIN_WITH_TIME if past_time else MARGIN

    def _ask_llm(self, question: str) -> str | None:
        try:
            reply = self.llm.complete([{"role": "user", "content": prompts.INTENT.format(question=question)}],
                                      max_tokens=5, temperature=0.0)
        except Exception:  # noqa: BLE001 - the embedding vote stands if the LLM cannot help
            log.warning("intent classification by the LLM failed; using the embedding vote", exc_info=True)
            return None
        word = reply.strip().upper()
        if word.startswith("MEMORY"):
            return MEMORY
        if word.startswith("DOCUMENT"):
            return DOCUMENTS
        return None
