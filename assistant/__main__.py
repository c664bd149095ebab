"""Command line: `python -m assistant report --user U [--out FILE]` writes the learning report JSON.

Also: `python -m assistant load --user U FILE...` and `python -m assistant ask --user U "question"`.
The data folder's stores (every user's): `python -m assistant backup` takes a backup now, `repair` puts back
every damaged store (its header, else its newest good backup), `restore STORE [--at TIME]` puts a backup in
place of a store that is not damaged, `restore --list` lists the backups (core.backup).
Errors are one sentence on stderr and exit status 1.
"""
from __future__ import annotations

import argparse
import json
import logging
import sys

from core.errors import AssistantError


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m assistant", description="The PDF learning assistant.")
    sub = parser.add_subparsers(dest="command", required=True)
    rep = sub.add_parser("report", help="write the learning report (JSON) of one user")
    rep.add_argument("--user", required=True)
    rep.add_argument("--out", help="file to write (default: print to stdout)")
    load = sub.add_parser("load", help="add documents to a user's library")
    load.add_argument("--user", required=True)
    load.add_argument("files", nargs="+")
    ask = sub.add_parser("ask", help="ask a question (answer streamed to stdout)")
    ask.add_argument("--user", required=True)
    ask.add_argument("question")
    sub.add_parser("backup", help="back up the data folder's databases now (every user's)")
    sub.add_parser("repair", help="put back every damaged database: its header, else its newest good backup "
                                  "(stop the app first)")
    res = sub.add_parser("restore", help="put a backup in place of a database that is not damaged "
                                         "(stop the app first)")
    res.add_argument("store", nargs="?", help=f"one of: {', '.join(_store_names())}")
    res.add_argument("--at", help="the backup's time as listed (default: the newest good one)")
    res.add_argument("--list", action="store_true", help="list the backups")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    if args.command in ("backup", "repair", "restore"):
        try:
            return _stores_command(args)
        except AssistantError as exc:
            print(str(exc), file=sys.stderr)
            return 1

    from assistant.registry import get_assistant
    try:
        assistant = get_assistant(args.user)
        if args.command == "report":
            from assistant.report import validate_report, write_report
            report = assistant.generate_report()
            validate_report(report)
            if args.out:
                path = write_report(report, args.out)
                print(f"Wrote the report of '{args.user}' to {path}.", file=sys.stderr)
            else:
                print(json.dumps(report, ensure_ascii=False, indent=2))
        elif args.command == "load":
            failed = 0
            for f in args.files:
                try:
                    print(assistant.load_document(f).message)
                except AssistantError as exc:
                    failed += 1
                    print(f"{f}: {exc}", file=sys.stderr)
            return 1 if failed else 0
        else:
            from assistant.types import AskResult
            for item in assistant.ask(args.question):
                if isinstance(item, AskResult):
                    print()
                    for c in item.citations:
                        print(f"{c.label} (score {c.score:.3f})")
                    if item.notice:
                        print(item.notice, file=sys.stderr)
                else:
                    print(item, end="", flush=True)
    except AssistantError as exc:
        print(str(exc), file=sys.stderr)
        return 1
    except OSError as exc:
        from core.errors import DiskFull, is_disk_full
        if not is_disk_full(exc):
            raise
        print(str(DiskFull()), file=sys.stderr)
        return 1
    return 0


def _store_names() -> list[str]:
    from core.sqlite import STORES
    return [kind.name.split(".")[0] for kind in STORES]


def _stores_command(args) -> int:
    """backup / repair / restore, on the data folder's files (no assistant is made: no model loads)."""
    from core import backup
    from core.settings import get_settings
    from core.sqlite import STORES
    settings = get_settings()
    data_dir = settings.data_dir.resolve()
    if args.command == "backup":
        for outcome in backup.back_up(data_dir, force=True):
            print(outcome)
        return 0
    if args.command == "restore" and (args.list or not args.store):
        lines = backup.listing(data_dir)
        print("\n".join(lines) if lines else f"There are no backups in {backup.backup_root(data_dir)} yet.")
        return 0 if args.list else 2
    with _folder_held(settings):
        if args.command == "repair":
            outcomes = backup.repair(data_dir, embedding_cache=settings.embedding_cache)
            for outcome in outcomes:
                print(outcome)
            return 1 if any(o.done == "set aside" for o in outcomes) else 0
        kind = next((k for k in STORES if args.store in (k.name, k.file, k.name.split(".")[0])), None)
        if kind is None:
            print(f"There is no database '{args.store}'; it is one of: {', '.join(_store_names())}.",
                  file=sys.stderr)
            return 2
        outcome = backup.restore(data_dir, kind, args.at)
        print(outcome)
        return 0 if outcome.done == "restored" else 1


def _folder_held(settings):
    """The data folder's process lock (core.vectors) while files are replaced: the app must not be using them.
    With a Qdrant server there is no such lock; the person is trusted to have stopped the app."""
    import contextlib
    if settings.qdrant_url:
        return contextlib.nullcontext()
    from core.vectors import lock_folder
    folder = settings.data_dir / "qdrant"
    folder.mkdir(parents=True, exist_ok=True)
    return contextlib.closing(lock_folder(folder, settings.data_dir))


if __name__ == "__main__":
    sys.exit(main())
