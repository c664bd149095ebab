"""What a question asks for, read before anything is searched: its kind, its scope, what it compares.

`plan_question` joins rag.kinds (lookup, explain, compare, summarize, example, why, howto), rag.scope (a
chapter, section, page range or the whole book, resolved against the documents' outlines) and rag.compare
(the two sides of a comparison). RAGTool.ask_stream answers by the plan.
"""
from __future__ import annotations

from dataclasses import dataclass

from core.text import detect_language, search_tokens
from rag.compare import asks_what_each_is, comparison_sides, compares_clauses
from rag.kinds import classify_kind
from rag.listing import listed_section
from rag.outline import Outline, heading_text
from rag.scope import Scope, ScopeRequest, TopicAcross, read_scope, resolve_scope


@dataclass
class QuestionPlan:
    question: str
    kind: str
    confidence: float
    request: ScopeRequest
    scope: Scope | None
    sides: tuple[str, ...] | None     # the things a comparison sets side by side (rag.compare)
    language: str
    documents: tuple[str, ...] = ()     # the documents the question names ("in the pumpkin book"), by doc_id

    @property
    def missing_scope(self) -> bool:
        """The question names a chapter, section or pages by number that no document has. A chapter named by
        its subject that no heading matches ("the pumpkin book's SVM chapter" over 支持向量机, "the section on
        costs" over "Expenses") is searched for instead: the subject may be there under other words."""
        return bool(self.request.unit) and self.scope is None and not (self.request.topic and not self.request.number)

    @property
    def summarizes(self) -> bool:
        return self.kind == "summarize" and self.scope is not None


# A lookup or explanation of a chapter named by its number is a summary when the classifier gives that this much
SUMMARY_HINT = 0.15


def plan_question(question: str, outlines: dict[str, Outline], names: dict[str, str], languages: dict[str, str],
                  named_docs: list[str], topic_across: TopicAcross | None = None) -> QuestionPlan:
    request = read_scope(question)
    scope = resolve_scope(request, outlines, names, question=question, named_docs=named_docs, languages=languages,
                          topic_across=topic_across)
    asked = _without_title(question, scope)
    decision = _asked_of_the_scope(asked, request)
    kind = decision.kind
    sides = comparison_sides(question) if kind == "compare" or decision.scores.get("compare", 0) >= 0.2 else None
    if sides and compares_clauses(sides):
        # two situations set against each other are two asks, answered part by part (rag.parts), as what the
        # question asks of each: "what exit code … when a command isnt found vs when it exists but …" looks up
        sides = None
        if kind == "compare":
            kind = max((k for k in decision.scores if k != "compare"), key=decision.scores.get, default="lookup")
    if sides and asks_what_each_is(question):
        kind = "explain"          # "what are contexts and engravers?": each found on its own, each explained
    elif sides and kind not in ("compare", "why", "howto"):
        kind = "compare"          # "list vs tuple?" names two sides: whatever else it asks, it compares them
    # "What does chapter 4 cover?", "第三章讲了什么": a chapter named by its number with nothing more specific asked
    # of it. One named by its subject says what is asked by itself ("In the SVM chapter, which conditions must the
    # hyperplane meet?" is a lookup there; "What does the SVM chapter cover?" the classifier calls a summary).
    if request.unit in ("chapter", "pages") and not request.topic and scope is not None and \
            kind in ("lookup", "explain") and decision.scores.get("summarize", 0) >= SUMMARY_HINT and \
            _asked_without_scope(asked, request, min_words=OWN_ASK_MIN_WORDS) is None:
        kind = "summarize"
    # "SLA 里一般都要写哪些内容": the parts of what a section with sub-sections is titled after are its sub-sections
    if scope is None and not request.named and kind in ("lookup", "explain") and not sides:
        listed = listed_section(question, outlines)
        if listed is not None:
            scope, kind = Scope(listed[0], names.get(listed[0], listed[0]), node=listed[1]), "summarize"
    if scope is not None and scope.node is None and scope.pages is None and kind != "summarize":
        scope = None     # "what does the book say about X": the book is where to look, which retrieval knows
    return QuestionPlan(question, str(kind), decision.confidence, request, scope, sides, detect_language(question),
                        tuple(named_docs))


def _without_title(question: str, scope: Scope | None) -> str:
    """The question without the title of the chapter it names: the title's words say what the chapter is about, not
    what is asked of it ("第五章动手搭建大模型都干了哪些事" reads as a how-to by "动手搭建", the chapter's own title)."""
    if scope is None or scope.node is None:
        return question
    title = heading_text(scope.node.title).strip()
    at = question.lower().find(title.lower()) if len(title) >= 2 else -1
    return question if at < 0 else (question[:at] + " " + question[at + len(title):]).strip()


# Below this, the words left once the scope is taken out do not ask anything of their own
ASKED_OF_SCOPE_MIN_CONFIDENCE = 0.35
ASKED_OF_SCOPE_MIN_WORDS = 2
# A lookup or explanation of a numbered chapter stays one (is not made a summary) only when its rest names this
# many words: "第三章讲的是什么内容" leaves 讲 and 内容, which ask for the chapter's content; "第11章模型公式里 y ~ x - 1
# 是啥意思？" leaves eight
OWN_ASK_MIN_WORDS = 3


def _asked_of_the_scope(question: str, request: ScopeRequest):
    """The question's kind. "第 9 章说测试 has_no_e 这种函数的时候应该测哪些情况" names a chapter, which the classifier reads
    as a summary; what it asks of the chapter is in the rest. When the question without its scope phrase still
    asks something (words of its own, a confident kind that is not a summary), that kind is the question's."""
    decision = classify_kind(question)
    if decision.kind != "summarize":
        return decision
    return _asked_without_scope(question, request) or decision


def _asked_without_scope(question: str, request: ScopeRequest, min_words: int = ASKED_OF_SCOPE_MIN_WORDS):
    """The kind the question has without its scope phrase, when that rest asks something of its own (words of
    its own, a confident kind that is not a summary: "第11章模型公式里 y ~ x - 1 是啥意思？"); else None."""
    if not request.phrase or request.phrase not in question:
        return None
    rest = question.replace(request.phrase, " ")
    if len(search_tokens(rest)) < min_words:
        return None
    asked = classify_kind(rest)
    if asked.kind != "summarize" and asked.confidence >= ASKED_OF_SCOPE_MIN_CONFIDENCE and \
            asked.scores.get("summarize", 0) < SUMMARY_HINT:
        return asked
    return None
