"""Check the learner question sets against the shared documents (not the app).

    python evalsets/learner_en/check_points.py [SET ...] [--data DIR]

SET defaults to evalsets/learner_en, learner_zh and learner_cross. For every question it checks the
format (type, lang, 2-4 points, gold documents listed in docs.txt, PDF pages in range, Markdown gold
text an exact span of its file) and that each point has at least one alternative that occurs in the
gold text, folded as the answer check folds it (NFKC, case, whitespace). The gold text of a PDF gold
is its page (pypdfium2; U+FFFE hyphenation marks of the extraction removed, or read as "-"); of a
Markdown gold, the section that contains the span (from its heading to the next heading of the same
or a higher level). Prints one line per failure and a summary; exits 1 if anything failed.
"""
import argparse
import json
import re
import sys
import unicodedata
from collections import Counter
from pathlib import Path

TYPES = {"lookup", "explain", "compare", "summarize", "example", "why", "howto", "crosslang"}
HERE = Path(__file__).resolve().parent
CJK = re.compile(r"[\u4e00-\u9fff]")


def fold(text: str) -> str:
    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", text).casefold())


def pdf_pages(path: Path) -> list[str]:
    import pypdfium2 as pdfium
    doc = pdfium.PdfDocument(str(path))
    try:
        return [doc[i].get_textpage().get_text_range() for i in range(len(doc))]
    finally:
        doc.close()


def md_section(text: str, start: int) -> str:
    """The section of a Markdown file around offset start (headings inside code fences ignored)."""
    headings, offset, fenced = [], 0, False
    for line in text.splitlines(keepends=True):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        m = None if fenced else re.match(r"(#{1,6})\s", line)
        if m:
            headings.append((offset, len(m.group(1))))
        offset += len(line)
    before = [h for h in headings if h[0] <= start]
    if not before:
        return text
    begin, level = before[-1]
    after = [h for h in headings if h[0] > begin and h[1] <= level]
    return text[begin:after[0][0] if after else len(text)]


def check_set(folder: Path, data: Path, cache: dict) -> tuple[int, Counter]:
    docs = {}
    for line in (folder / "docs.txt").read_text(encoding="utf-8").splitlines():
        if line.strip():
            path = data / line.strip()
            if not path.is_file():
                print(f"{folder.name}: document missing: {path}")
                return 1, Counter()
            docs[path.name] = path
    failures, ids, counts = 0, set(), Counter()

    def fail(qid, message):
        nonlocal failures
        failures += 1
        print(f"{folder.name} {qid}: {message}")

    for n, line in enumerate((folder / "questions.jsonl").read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        q = json.loads(line)
        qid = q.get("id", f"line {n}")
        if qid in ids:
            fail(qid, "duplicate id")
        ids.add(qid)
        counts[(q.get("type"), q.get("lang"))] += 1
        if q.get("type") not in TYPES:
            fail(qid, f"bad type {q.get('type')!r}")
        lang = q.get("lang")
        if lang not in ("en", "zh") or (lang == "zh") != bool(CJK.search(q.get("question", ""))):
            fail(qid, f"lang {lang!r} does not fit the question")
        points = q.get("points") or []
        if not 2 <= len(points) <= 4 or not all(p and all(isinstance(a, str) and a.strip() for a in p) for p in points):
            fail(qid, "points must be 2-4 non-empty lists of strings")
        texts = []
        for gold in q.get("gold") or []:
            name = gold.get("doc")
            if name not in docs:
                fail(qid, f"gold document {name!r} not in docs.txt")
                continue
            path = docs[name]
            if path.suffix.lower() == ".pdf":
                if path not in cache:
                    cache[path] = pdf_pages(path)
                pages = cache[path]
                page = gold.get("page")
                if not isinstance(page, int) or not 1 <= page <= len(pages):
                    fail(qid, f"page {page!r} out of range for {name}")
                    continue
                texts.append(pages[page - 1])
            else:
                if path not in cache:
                    cache[path] = path.read_text(encoding="utf-8")
                content = cache[path]
                span = gold.get("text") or ""
                at = content.find(span) if span else -1
                if at < 0:
                    fail(qid, f"gold text {span!r} not found in {name}")
                    continue
                texts.append(md_section(content, at))
        if not texts:
            fail(qid, "no usable gold")
            continue
        joined = "\n".join(texts)
        haystacks = [fold(joined.replace("\ufffe", "")), fold(joined.replace("\ufffe", "-"))]
        for point in points:
            if not any(fold(alt) in h for alt in point for h in haystacks):
                fail(qid, f"no alternative of point {point} occurs in the gold text")
    return failures, counts


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("sets", nargs="*", type=Path,
                        default=[HERE.parent / name for name in ("learner_en", "learner_zh", "learner_cross")])
    parser.add_argument("--data", type=Path, default=HERE.parents[2] / "shared" / "data",
                        help="the shared data folder that docs.txt paths are relative to")
    args = parser.parse_args(argv)
    total, cache = 0, {}
    for folder in args.sets:
        failures, counts = check_set(folder, args.data, cache)
        total += failures
        summary = ", ".join(f"{t}/{l} {c}" for (t, l), c in sorted(counts.items()))
        print(f"{folder.name}: {sum(counts.values())} questions ({summary}); {failures} failures")
    print(f"total failures: {total}")
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
