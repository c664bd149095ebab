"""Card quality, measured: `python -m study.quality DOC (--chapter NAME | --pages A-B) [--llm none|local|auto]`
ingests DOC into a scratch data folder, makes cards from the chapter as the app does, and prints one JSON
line: how many cards, the share whose answer the source page supports (lexical + embedding check,
independent of how the card was made), the share with a near-duplicate, their languages, and seconds.

Targets (issue 11): supported ≥ 0.95 and no near-duplicates, on a Think Python chapter and a pumpkin-book
chapter, with the local model and without any LLM."""
from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np

from rag.evidence import SUPPORTED, embedder_for, sentence_support, terms_of
from rag.terms import tidy
from study.types import BLANK, CLOZE, Card, normal_text

FRONT_SCALE = 1.5      # fronts this close (1.0 = a typical close paraphrase) ask the same thing


def card_claim(card: Card) -> str:
    """What the card asserts: a cloze sentence with its blank filled; a question's answer."""
    return card.front.replace(BLANK, card.back) if card.kind == CLOZE else card.back


def page_passage(store, user_id: str, card: Card) -> str:
    """The text of the card's page (or the document's text for page-less ones): what must back it."""
    chunks = store.chunks_of(user_id, card.doc_id) if card.doc_id else []
    if card.page is not None:
        chunks = [c for c in chunks if c.page_start is not None and c.page_start <= card.page <= (c.page_end or c.page_start)]
    return "\n".join(tidy(c.text) for c in chunks)


def supported_share(cards: list[Card], store, user_id: str, embedders) -> tuple[float, list[Card]]:
    unsupported = []
    for card in cards:
        passage = page_passage(store, user_id, card)
        if not passage or not all(_supported(text, passage, embedders) for text in {card_claim(card), card.back}):
            unsupported.append(card)
    return (1 - len(unsupported) / len(cards)) if cards else 0.0, unsupported


def _supported(text: str, passage: str, embedders) -> bool:
    """The page backs the text; checked for the whole claim and for the answer alone (a cloze sentence
    with a wrong term filled in is still mostly the page's words)."""
    if not terms_of(text):          # "0" or "yes" has no words to find on the page: not checkable, not backed
        return False
    return sentence_support(text, passage, embedder_for(embedders, text, passage[:400])) >= SUPPORTED


def near_duplicates(cards: list[Card], embedders) -> list[tuple[Card, Card]]:
    """Pairs of cards that ask the same thing: the same answer, or fronts closer than a close paraphrase
    (FRONT_SCALE on the embedder's own scale) with related answers. Two cards on similar sentences that
    want different terms ("经验误差" / "泛化误差") are two cards, not one."""
    pairs = []
    by_language: dict[str, list[Card]] = {}
    for c in cards:
        by_language.setdefault(c.language, []).append(c)
    for group in by_language.values():
        if len(group) < 2:
            continue
        embedder = embedder_for(embedders, group[0].front)
        fronts = backs = None
        if embedder is not None:
            unrelated, close = embedder.calibration
            scale = lambda m: (m - unrelated) / (close - unrelated)   # noqa: E731
            fronts = scale(_cosines(embedder, [c.front.replace(BLANK, " ") for c in group]))
            backs = scale(_cosines(embedder, [c.back for c in group]))
        for i in range(len(group)):
            for j in range(i + 1, len(group)):
                same_answer = normal_text(group[i].back) == normal_text(group[j].back)
                if same_answer or (fronts is not None and fronts[i, j] >= FRONT_SCALE and backs[i, j] >= 1.0):
                    pairs.append((group[i], group[j]))
    return pairs


def _cosines(embedder, texts: list[str]) -> np.ndarray:
    vectors = embedder.embed(texts, kind="document")
    return vectors @ vectors.T


def measure(desk, cards: list[Card]) -> dict:
    supported, unsupported = supported_share(cards, desk.rag.store, desk.user_id, desk.rag.dense)
    duplicates = near_duplicates(cards, desk.rag.dense)
    in_pair = {c.card_id for pair in duplicates for c in pair}
    return {"cards": len(cards), "supported": round(supported, 3),
            "near_duplicate_share": round(len(in_pair) / len(cards), 3) if cards else 0.0,
            "languages": dict(Counter(c.language for c in cards)), "kinds": dict(Counter(c.kind for c in cards)),
            "unsupported_examples": [f"{c.front[:80]} -> {c.back[:40]} (p. {c.page})" for c in unsupported[:5]],
            "duplicate_examples": [f"{a.front[:60]} ~ {b.front[:60]}" for a, b in duplicates[:5]]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("doc", type=Path)
    parser.add_argument("--chapter", help="a top-level heading of the document (see --list)")
    parser.add_argument("--pages", help="first-last, e.g. 16-30")
    parser.add_argument("--list", action="store_true", help="print the document's chapters and stop")
    parser.add_argument("--llm", choices=["none", "local", "auto"], default="none")
    parser.add_argument("--data-dir", type=Path, help="keep the scratch data folder here (re-used: no re-ingest)")
    parser.add_argument("--embedding-cache", help="an embedding cache file (as in rag.eval)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from assistant.registry import get_assistant
    from core.settings import Settings
    data_dir = args.data_dir or Path(tempfile.mkdtemp(prefix="card-quality-"))
    extra = {"embedding_cache": args.embedding_cache} if args.embedding_cache else {}
    settings = Settings(_env_file=None, data_dir=data_dir, llm_backend=args.llm, **extra)
    assistant = get_assistant("quality", settings)
    record = next((d for d in assistant.list_documents() if d.name == args.doc.name), None)
    if record is None:
        assistant.load_document(args.doc)
        record = next(d for d in assistant.list_documents() if d.name == args.doc.name)
    desk = assistant.study
    if args.list:
        print("\n".join(desk.chapters(record.doc_id)))
        return 0
    desk.clear()
    started = time.perf_counter()
    if args.chapter:
        chapter = next((c for c in desk.chapters(record.doc_id) if args.chapter.lower() in c.lower()), None)
        if chapter is None:
            print(f"No chapter matches {args.chapter!r}; --list shows them.", file=sys.stderr)
            return 2
        made = desk.cards_from_section(record.doc_id, chapter)
        source = chapter
    elif args.pages:
        first, last = (int(p) for p in args.pages.split("-"))
        made = desk.cards_from_pages(record.doc_id, first, last)
        source = f"pages {first}-{last}"
    else:
        parser.error("give --chapter or --pages")
    seconds = time.perf_counter() - started
    result = {"doc": record.name, "source": source, "llm": args.llm,
              "model": getattr(assistant.rag.llm, "model", None), "candidates": made.candidates,
              "dropped_unsupported": made.unsupported, "dropped_duplicates": made.duplicates,
              "seconds": round(seconds, 1), **measure(desk, made.cards)}
    for c in made.cards:
        print(f"  [{c.kind}] p.{c.page} {c.front[:100]!r} -> {c.back[:60]!r}", file=sys.stderr)
    print(json.dumps(result, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
