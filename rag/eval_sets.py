"""Build evaluation folders (docs/ + questions.jsonl, format in the shared EVAL.md) from other ones.

    python -m rag.eval_sets mix OUT --docs A --questions-from B [--questions-from C ...]
                                [--answerable-from A] [--limit-per-source N] [--seed S]

`mix` makes an UNANSWERABLE set, as EVAL.md says: one set's questions asked against another set's
documents. OUT/docs holds symbolic links to A's documents (nothing is copied: the data's licences
forbid copying it into the project); A is an evaluation folder (its docs/ is used) or a plain folder
of documents. OUT/questions.jsonl holds B's questions with `"gold": []` and ids prefixed with
`unans-<B>-` (B's answer is kept as `source_answer`), and, with --answerable-from, that folder's own
questions unchanged, so one run measures refusing the unanswerable and not refusing the answerable.
--limit-per-source N keeps N questions of each source, drawn with --seed; the lines are shuffled with
the same seed so `rag.eval --limit` still sees both kinds. Pick sets whose topics do not overlap (e.g.
FinanceBench questions against the books of data/docs): a mixed-in question the documents happen to
answer is counted as unanswerable all the same.

The last line printed is a JSON summary: {"out", "docs", "answerable", "unanswerable"}.

    python -m rag.eval_sets own SET OUT [--data ../shared/data]

`own` makes an evaluation folder from one of the project's own question sets (evalsets/<name>/: our
questions.jsonl and a docs.txt naming the documents relative to the shared data folder): OUT/docs
links to those documents, OUT/questions.jsonl is a copy of ours.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import sys
from pathlib import Path


def documents_of(folder: Path) -> list[Path]:
    """The documents of an evaluation folder (its docs/) or of a plain folder of files."""
    base = folder / "docs" if (folder / "docs").is_dir() else folder
    if not base.is_dir():
        raise SystemExit(f"{folder} is not a folder")
    return sorted(p for p in base.iterdir() if p.is_file() and not p.name.startswith("."))


def read_questions(folder: Path) -> list[dict]:
    path = folder / "questions.jsonl"
    if not path.is_file():
        raise SystemExit(f"{folder} has no questions.jsonl")
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def pick(items: list[dict], limit: int | None, rng: random.Random) -> list[dict]:
    """`limit` items drawn at random (all when no limit), in their original order."""
    if not limit or limit >= len(items):
        return list(items)
    keep = sorted(rng.sample(range(len(items)), limit))
    return [items[i] for i in keep]


def link_documents(docs: list[Path], target: Path) -> None:
    """target/<name> -> the document's real path, for each document; stale links are replaced."""
    target.mkdir(parents=True, exist_ok=True)
    for old in target.iterdir():
        if old.is_symlink():
            old.unlink()
        else:
            raise SystemExit(f"{old} is not a symbolic link; choose an empty OUT folder")
    for doc in docs:
        os.symlink(doc.resolve(), target / doc.name)


def mix(out: Path, docs_from: Path, questions_from: list[Path], answerable_from: Path | None = None,
        limit_per_source: int | None = None, seed: int = 0) -> dict:
    rng = random.Random(seed)
    docs = documents_of(docs_from)
    if not docs:
        raise SystemExit(f"{docs_from} holds no documents")
    names = {d.name for d in docs}
    lines: list[dict] = []
    answerable = 0
    if answerable_from is not None:
        own = pick(read_questions(answerable_from), limit_per_source, rng)
        missing = {g.get("doc") for q in own for g in q.get("gold") or [] if isinstance(g, dict)} - names
        if missing:
            print(f"warning: gold documents not in --docs: {', '.join(sorted(map(str, missing)))[:300]}",
                  file=sys.stderr)
        lines += own
        answerable = sum(1 for q in own if q.get("gold"))
    unanswerable = 0
    for source in questions_from:
        prefix = f"unans-{source.resolve().name}-"
        for q in pick(read_questions(source), limit_per_source, rng):
            lines.append({"id": f"{prefix}{q.get('id', unanswerable)}", "question": q["question"], "answer": "",
                          "gold": [], "source_answer": q.get("answer", "")})
            unanswerable += 1
    rng.shuffle(lines)
    link_documents(docs, out / "docs")
    with open(out / "questions.jsonl", "w", encoding="utf-8") as f:
        for q in lines:
            f.write(json.dumps(q, ensure_ascii=False) + "\n")
    return {"out": str(out), "docs": len(docs), "answerable": answerable, "unanswerable": unanswerable}


def own(out: Path, question_set: Path, data: Path) -> dict:
    listed = [line.strip() for line in open(question_set / "docs.txt", encoding="utf-8") if line.strip()]
    docs = [data / rel for rel in listed]
    missing = [str(d) for d in docs if not d.is_file()]
    if missing:
        raise SystemExit(f"documents of {question_set.name} not found: {', '.join(missing)[:300]}")
    questions = read_questions(question_set)
    link_documents(docs, out / "docs")
    with open(out / "questions.jsonl", "w", encoding="utf-8") as f:
        for q in questions:
            f.write(json.dumps(q, ensure_ascii=False) + "\n")
    return {"out": str(out), "docs": len(docs), "answerable": sum(1 for q in questions if q.get("gold")),
            "unanswerable": sum(1 for q in questions if not q.get("gold"))}


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(prog="python -m rag.eval_sets", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    m = commands.add_parser("mix", help="one set's questions (unanswerable) against another set's documents")
    m.add_argument("out", type=Path)
    m.add_argument("--docs", type=Path, required=True, help="an evaluation folder or a plain folder of documents")
    m.add_argument("--questions-from", type=Path, action="append", required=True,
                   help="an evaluation folder whose questions become unanswerable (repeatable)")
    m.add_argument("--answerable-from", type=Path, help="an evaluation folder whose questions are kept as they are")
    m.add_argument("--limit-per-source", type=int, help="at most N questions of each source")
    m.add_argument("--seed", type=int, default=0)
    o = commands.add_parser("own", help="one of the project's own question sets (evalsets/NAME) as an evaluation folder")
    o.add_argument("set", type=Path, help="e.g. evalsets/zh_paraphrase")
    o.add_argument("out", type=Path)
    o.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data",
                   help="the shared data folder (default: ../shared/data beside the repository)")
    args = parser.parse_args(argv)
    if args.command == "own":
        summary = own(args.out, args.set, args.data)
    else:
        summary = mix(args.out, args.docs, args.questions_from, args.answerable_from, args.limit_per_source,
                      args.seed)
    print(json.dumps(summary, ensure_ascii=False))
    return summary


if __name__ == "__main__":
    main()
