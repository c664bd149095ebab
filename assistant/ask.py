"""The way of one question, read top to bottom: route → rewrite → retrieve → answer → check → remember.

`ask_question` is the whole trip; the facade (`PDFLearningAssistant.ask`) only hands it over.

1. route     — is it about the documents, or about the person's own learning history (assistant.intent)?
2. rewrite   — a follow-up that depends on the conversation is made standalone (assistant.followup);
               an independent question is searched exactly as asked.
3. retrieve  ┐
4. answer    ├ rag.tool.RAGTool.ask_stream: hybrid retrieval, the passages shown at once, then "not in your
5. check     ┘ documents", the extractive answer, or the LLM's composed answer with each cited sentence checked.
6. remember  — working memory holds the question; episodic memory what was asked, searched and cited —
               a refused answer is stored as refused, an unchecked sentence as unchecked, never as fact.
"""
from __future__ import annotations

import logging
import time
from collections.abc import Iterator

from assistant import history as H
from assistant import prompts
from assistant.followup import own_words, standalone_question
from assistant.timerange import Period, parse_period
from assistant.types import AskResult, MemoryRef
from core.errors import AssistantError, InvalidRequest, LLMError, Notice
from rag.types import Answer, SourcesEvent

log = logging.getLogger(__name__)

MAX_QUESTION_CHARS = 4000      # longer is a pasted document, not a question
MEMORY_ANSWER_ITEMS = 12       # memory records a memory answer lists or gives the LLM


def ask_question(assistant, question: str, history: list[dict] | None = None, *, mqe: bool = False,
                 hyde: bool = False, session_id: str) -> Iterator[str | SourcesEvent | AskResult]:
    """Yield a SourcesEvent (passages, at once), the answer's text as it is written, then the AskResult."""
    question = (question or "").strip()
    if not question:
        raise InvalidRequest("The question is empty; type a question first.", key="err_question_empty")
    if len(question) > MAX_QUESTION_CHARS:
        raise InvalidRequest(f"A question can be at most {MAX_QUESTION_CHARS:,} characters; shorten it, "
                             "or add long text as a document.", key="err_question_too_long", n=MAX_QUESTION_CHARS)
    started = time.perf_counter()
    history = [t for t in (history or []) if isinstance(t.get("content"), str)]
    with assistant.lock:
        assistant._remember(question, "working", H.KIND_QUESTION, session_id)

    # 1. route
    decision = assistant.router.classify(question)
    first_token: list[float] = []
    if decision.is_memory:
        stream = _answer_from_memory(assistant, question, history)
    else:
        stream = _answer_from_documents(assistant, question, history, mqe, hyde)
    while True:
        try:
            item = next(stream)
        except StopIteration as done:
            result: AskResult = done.value
            break
        if isinstance(item, str) and item and not first_token:
            first_token.append(time.perf_counter() - started)
        yield item
    result.intent_margin = decision.margin
    result.seconds = round(time.perf_counter() - started, 3)
    result.first_token_s = round(first_token[0], 3) if first_token else None

    # 6. remember
    with assistant.lock:
        _remember_interaction(assistant, result, session_id)
    yield result


def _answer_from_documents(assistant, question, history, mqe, hyde):
    rag = assistant.rag
    # 2. rewrite, only when the question depends on the conversation
    search_query, how = standalone_question(question, history, rag.llm)
    own = None       # the searched words the person wrote; only these may be "never mentioned in your documents"
    if how != "as asked":
        log.info("follow-up %r searched as %r (%s)", question, search_query, how)
        own = own_words(question, history, search_query)
    # Notes and past questions help an endpoint model; a small local model answers from the passages alone
    # (its time goes into reading the prompt).
    memory_context, used = "", []
    if rag.llm is not None and not getattr(rag.llm, "is_local", False):
        memory_context, used = H.pack_memories(_relevant_memories(assistant, search_query))
    options = {"mqe": bool(mqe), "hyde": bool(hyde)} if rag.llm is not None else {}
    # 3-5. retrieve, answer, check
    answer: Answer | None = None
    for item in rag.ask_stream(search_query, memory_context=memory_context or None, own_words=own, **options):
        if isinstance(item, Answer):
            answer = item
        else:
            yield item
    notices = list(answer.notices)
    if (mqe or hyde) and rag.llm is None:
        notices.append(Notice("Advanced search (MQE/HyDE) needs a language model; the question was searched "
                              "as written.", key="notice_advanced_search_needs_llm"))
    return AskResult(question=question, text=answer.text, route="documents", mode=answer.mode,
                     citations=answer.citations, memories=used, notice=" ".join(notices), notices=notices,
                     search_query=search_query if how != "as asked" else "", refused=answer.refused,
                     related=answer.related, llm=answer.llm, kind=answer.kind)


def _relevant_memories(assistant, question: str) -> list[MemoryRef]:
    """Notes, preferences and past questions close to this question (for the prompt, labelled as memory)."""
    from memory.types import MemoryType
    try:
        hits = assistant.memory.search(question, memory_types=[MemoryType.SEMANTIC, MemoryType.EPISODIC], limit=12)
    except AssistantError:
        log.warning("memory search failed; answering without memories", exc_info=True)
        return []
    refs = []
    for hit in hits:
        kind = hit.metadata.get("kind")
        if kind == H.KIND_QA and (hit.metadata.get("route") == "memory" or hit.metadata.get("refused")):
            continue  # questions about the history itself, or that found nothing, say nothing about the topic
        if kind == H.KIND_QA and hit.metadata.get("question", "").strip() == question:
            continue  # the same question asked before: its old answer would only echo
        if H.cosine_of(hit) >= H.MIN_COSINE or kind == H.KIND_PREFERENCE:
            refs.append(H.to_ref(hit))
    for pref in assistant._stored(["semantic"], kind=H.KIND_PREFERENCE)[:3]:   # stated preferences always apply
        if all(r.id != pref.id for r in refs):
            refs.insert(0, pref)
    return refs


def _answer_from_memory(assistant, question: str, history: list[dict]):
    llm = assistant.rag.llm
    period = parse_period(question)
    records = _memory_records(assistant, question, period)
    period_text = f" ({period.label})" if period else ""
    if not records:
        text = prompts.NO_MEMORIES.format(period=f" {period.label}" if period else "")
        yield text
        return AskResult(question=question, text=text, route="memory", mode="memory",
                         period=period.label if period else "")
    lines = [H.describe(r) for r in records]
    text, notice = None, None
    if llm is not None:
        messages = [{"role": "system", "content": prompts.MEMORY_ANSWER_SYSTEM}]
        messages += [{"role": t["role"], "content": t["content"]} for t in history[-4:]
                     if t.get("role") in ("user", "assistant")]
        messages.append({"role": "user", "content": prompts.MEMORY_ANSWER_USER.format(
            period=period_text, records="\n".join(f"- {line}" for line in lines), question=question)})
        pieces: list[str] = []
        try:
            for piece in llm.stream(messages):
                pieces.append(piece)
                yield piece
            text = _held_by_records("".join(pieces).strip(), lines, assistant.rag.dense) or None
            if text is None:       # nothing the model wrote is in the records: the records themselves answer
                notice = Notice(prompts.MEMORY_UNSUPPORTED_NOTICE, key="notice_memory_unsupported")
                yield "\n\n"
        except LLMError as exc:
            notice = Notice(f"{exc} Listing your records instead.", key="notice_listing_records",
                            error=Notice.of(exc))
            if pieces:
                yield "\n\n"
    if text is None:
        text = prompts.MEMORY_HEADER.format(period=period_text) + "\n" + "\n".join(f"- {line}" for line in lines)
        yield text
    composed_by = llm.model if llm is not None and not notice else "none"
    return AskResult(question=question, text=text, route="memory", mode="memory", memories=records,
                     notice=notice or "", notices=[notice] if notice else [], period=period.label if period else "",
                     llm=composed_by)


def _held_by_records(text: str, lines: list[str], embedder) -> str:
    """The model's memory answer without the sentences the records do not back (a small model given a list of
    past questions may invent where a person's files are kept): memory is checked like the documents are."""
    from rag.evidence import answer_sentences
    from rag.support import check
    records = "\n".join(lines)
    kept = [sentence for sentence in answer_sentences(text) if check(sentence, records, embedder).supported]
    return " ".join(kept).strip()


def _memory_records(assistant, question: str, period: Period | None) -> list[MemoryRef]:
    """What the person did: everything in the named period (oldest first), else the closest records."""
    def useful(ref: MemoryRef) -> bool:
        return not (ref.kind == H.KIND_QA and ref.metadata.get("route") == "memory") and ref.kind != H.KIND_QUESTION
    if period is not None:
        refs = [r for r in assistant._stored(["episodic", "semantic"], since=period.since, until=period.until)
                if useful(r)]
        refs.sort(key=lambda r: r.timestamp)
        return refs[-MEMORY_ANSWER_ITEMS:]
    from memory.types import MemoryType
    hits = assistant.memory.search(question, memory_types=[MemoryType.EPISODIC, MemoryType.SEMANTIC],
                                   limit=MEMORY_ANSWER_ITEMS * 2)
    refs = [H.to_ref(h) for h in hits if useful(H.to_ref(h))]
    if len(refs) < 3:  # "what have I learned so far?" matches little; the recent history answers it
        seen = {r.id for r in refs}
        refs += [r for r in assistant._stored(["episodic", "semantic"], limit=MEMORY_ANSWER_ITEMS)
                 if useful(r) and r.id not in seen]
    refs = refs[:MEMORY_ANSWER_ITEMS]
    refs.sort(key=lambda r: r.timestamp)
    return refs


QUOTE_START = 80     # characters of a cited quote kept with the question: enough to find its section again


def _remember_interaction(assistant, result: AskResult, session_id: str) -> None:
    """What was asked, searched and cited. A refused question is remembered as not found, and an answer
    with unchecked sentences says so: memory must never turn a doubtful answer into a fact."""
    cited = [{"doc_id": c.doc_id, "doc_name": c.doc_name, "page_start": c.page_start, "page_end": c.page_end,
              "score": c.score, "chunk_id": c.chunk_id, "quote_start": c.quote[:QUOTE_START]}
             for c in result.citations]     # the chunk and where the quote starts place it in a chapter (study.path)
    labels = [c.label for c in result.citations]
    if result.refused:
        content = f"Asked: {result.question}\nNot found in the documents."
        answer = ""
    else:
        content = f"Asked: {result.question}\nAnswer: {H.clip_tokens(result.text, 150)}"
        answer = H.clip_tokens(result.text, 300)
        if labels:
            content += "\nSources: " + "; ".join(labels)
    try:
        assistant._remember(content, "episodic", H.KIND_QA, session_id, question=result.question, route=result.route,
                            mode=result.mode, citations=cited, cited_labels=labels, answer=answer,
                            refused=result.refused, search_query=result.search_query, llm=result.llm,
                            unsupported="⚠" in result.text)
    except AssistantError:
        # The answer was given; failing to remember it must not take it back. Say so in the notice.
        log.exception("recording the interaction failed")
        result.notices.append(Notice("This exchange could not be saved to your history.", key="notice_not_saved"))
        result.notice = " ".join(n for n in (result.notice, result.notices[-1]) if n)
