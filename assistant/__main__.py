"""Command line: `python -m assistant report --user U [--out FILE]` writes the learning report JSON.

Also: `python -m assistant load --user U FILE...` and `python -m assistant ask --user U "question"`.
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
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)

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
    return 0


if __name__ == "__main__":
    sys.exit(main())
