"""Command line for the document side.

    python -m rag ingest FILE... [--user U] [--progress]
    python -m rag search "question" [--user U] [--top-k N] [--mode hybrid|dense|bm25]
    python -m rag ask "question" [--user U] [--mqe] [--hyde]
    python -m rag list [--user U]
    python -m rag remove DOC_ID [--user U]
    python -m rag reindex [--user U]      (embed every stored passage again, after changing the embedding model)
"""
from __future__ import annotations

import argparse
import logging
import sys

from core.errors import AssistantError
from core.settings import get_settings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rag", description="Ingest documents and ask them questions.")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--user", default=None, help="user namespace (default: DEFAULT_USER)")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("ingest", parents=[common], help="add files to the knowledge base")
    p.add_argument("files", nargs="+")
    p.add_argument("--progress", action="store_true", help="show each stage's progress on stderr")
    for name in ("search", "ask"):
        p = sub.add_parser(name, parents=[common])
        p.add_argument("query")
        p.add_argument("--top-k", type=int)
        p.add_argument("--mode", choices=["hybrid", "dense", "bm25"])
        p.add_argument("--mqe", action="store_true", default=None)
        p.add_argument("--hyde", action="store_true", default=None)
    sub.add_parser("list", parents=[common])
    p = sub.add_parser("remove", parents=[common])
    p.add_argument("doc_id")
    sub.add_parser("reindex", parents=[common], help="embed every stored passage again with the configured models")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")

    try:
        settings = get_settings()
        from rag.tool import RAGTool
        from rag.types import Answer
        tool = RAGTool(args.user or settings.default_user, settings)
        if args.command == "ingest":
            failed = 0
            for f in args.files:
                try:
                    r = tool.add_document(f, progress=show_progress if args.progress else None)
                except AssistantError as exc:
                    failed += 1
                    end_progress_line(args.progress)
                    print(f"{f}: {exc}", file=sys.stderr)
                    continue
                end_progress_line(args.progress)
                state = "already present" if r.already_present else f"{r.chunks} chunks in {r.seconds:.1f} s"
                print(f"{r.name}: {r.doc_id} · {r.pages} pages · {state}")
                for w in r.warnings:
                    print(f"  warning: {w}")
            return 1 if failed else 0
        if args.command in ("search", "ask"):
            options = {"top_k": args.top_k, "mode": args.mode, "mqe": args.mqe, "hyde": args.hyde}
            options = {k: v for k, v in options.items() if v is not None}
            if args.command == "search":
                for h in tool.search(args.query, **options):
                    path = " > ".join(h.chunk.heading_path)
                    print(f"{h.rank:>2}. {h.score:.4f}  {h.doc_name} {h.pages_label}  [{path}]")
                    print("    " + h.chunk.text[:300].replace("\n", " "))
                return 0
            final, printed = None, []
            for item in tool.ask_stream(args.query, **options):
                if isinstance(item, str):
                    printed.append(item)
                    print(item, end="", flush=True)
                elif isinstance(item, Answer):
                    final = item
            if "".join(printed).strip() != final.text:   # e.g. the model found nothing: say it plainly
                print("\n\n" + final.text, end="")
            print()
            listed = final.citations or final.related
            if listed:
                print("\nRelated passages:" if final.refused else "\nSources:")
                for c in listed:
                    print(f"  {c.label}" + (f"  ({c.strength} match)" if c.strength else ""))
            print(f"\nAnswered by: {final.llm if final.llm != 'none' else 'no language model (quoted passages)'}")
            if final.notice:
                print(f"Note: {final.notice}")
            return 0
        if args.command == "list":
            for d in tool.list_documents():
                print(f"{d.doc_id}  {d.name}  {d.pages} pages  {d.chunks} chunks")
            return 0
        if args.command == "reindex":
            def show(stage: str, done: int, total: int) -> None:
                print(f"\r{stage}: {done}/{total} passages", end="", file=sys.stderr, flush=True)
            count = tool.reindex(progress=show)
            print(f"\nre-embedded {count} passages with {', '.join(tool.dense.model_ids())}")
            return 0
        if args.command == "remove":
            removed = tool.remove_document(args.doc_id)
            print("removed" if removed else f"no document {args.doc_id}")
            return 0 if removed else 1
    except AssistantError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


def show_progress(stage: str, done: int, total: int) -> None:
    """A stage's progress on stderr ("embed: 128/752"): one line rewritten in place on a terminal, a line
    per step otherwise (a log file, or a program reading it)."""
    if sys.stderr.isatty():
        print(f"\r{stage}: {done}/{total}", end="", file=sys.stderr, flush=True)
    else:
        print(f"{stage}: {done}/{total}", file=sys.stderr, flush=True)


def end_progress_line(shown: bool) -> None:
    """End the line a terminal's progress was rewritten on, so what follows starts on its own."""
    if shown and sys.stderr.isatty():
        print(file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
