"""Check evalsets/support_pairs/pairs.jsonl: format, labels, and that every passage is really in its document.

Usage: python evalsets/support_pairs/check.py [DATA_DIR]   (DATA_DIR defaults to ../shared/data; it holds the
documents listed in docs.txt). Prints the counts by lang, passage_lang, kind and label; exits 1 on any problem.
A passage is found in its page (PDF, 1-based, text by pypdfium2) or in its Markdown file after dropping
whitespace, hyphens and U+FFFE (pdfium's mark for a word broken at a line end), so line breaks and re-joined
hyphenated words do not count as differences.
"""
import json
import re
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
SUPPORTED = {"verbatim", "paraphrase", "summary", "partial_wording"}
UNSUPPORTED = {"near_miss_swap", "negation", "antonym", "number", "relation", "invented_detail", "off_topic",
               "wrong_entity", "generic_step", "embellishment"}
FIELDS = ["id", "lang", "passage_lang", "sentence", "passage", "supported", "kind", "doc", "page", "note"]


def squash(text):
    return re.sub(r"[\s\-\ufffe]", "", text)


def main():
    data = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE.parents[2] / "shared" / "data"
    paths = {Path(p).name: data / p for p in (HERE / "docs.txt").read_text(encoding="utf-8").split("\n") if p}
    rows = [json.loads(line) for line in (HERE / "pairs.jsonl").read_text(encoding="utf-8").splitlines()]
    problems = []
    pages = {}

    def page_text(doc, page):
        if (doc, page) not in pages:
            path = paths[doc]
            if doc.endswith(".md"):
                pages[(doc, page)] = path.read_text(encoding="utf-8")
            else:
                import pypdfium2 as pdfium
                pages[(doc, page)] = pdfium.PdfDocument(str(path))[page - 1].get_textpage().get_text_range()
        return pages[(doc, page)]

    ids = Counter(r.get("id") for r in rows)
    for r in rows:
        rid = r.get("id")
        if list(r) != FIELDS:
            problems.append(f"{rid}: fields {list(r)}")
            continue
        if ids[rid] > 1:
            problems.append(f"{rid}: duplicate id")
        if r["kind"] not in SUPPORTED | UNSUPPORTED:
            problems.append(f"{rid}: unknown kind {r['kind']}")
        if r["supported"] is not (r["kind"] in SUPPORTED):
            problems.append(f"{rid}: kind {r['kind']} with supported={r['supported']}")
        if r["lang"] not in ("en", "zh") or r["passage_lang"] not in ("en", "zh"):
            problems.append(f"{rid}: lang {r['lang']}/{r['passage_lang']}")
        if r["passage_lang"] != ("zh" if r["doc"].endswith(".md") or r["doc"].startswith("pumpkin") else "en"):
            problems.append(f"{rid}: passage_lang {r['passage_lang']} for {r['doc']}")
        if len(r["passage"]) > 600:
            problems.append(f"{rid}: passage {len(r['passage'])} chars")
        if r["doc"] not in paths:
            problems.append(f"{rid}: doc {r['doc']} not in docs.txt")
        elif paths[r["doc"]].exists():
            if squash(r["passage"]) not in squash(page_text(r["doc"], r["page"])):
                problems.append(f"{rid}: passage not found in {r['doc']} page {r['page']}")
        else:
            problems.append(f"{rid}: {paths[r['doc']]} missing")
        if r["kind"] == "verbatim" and squash(r["sentence"].rstrip("。.")).lower() not in squash(r["passage"]).lower():
            problems.append(f"{rid}: verbatim sentence not in passage")

    group = lambda r: "crosslang" if r["lang"] != r["passage_lang"] else r["lang"]
    print(f"{len(rows)} pairs, {len(set(r['passage'] for r in rows))} distinct passages")
    print("group:", dict(Counter(group(r) for r in rows)))
    print("lang:", dict(Counter(r["lang"] for r in rows)), " passage_lang:", dict(Counter(r["passage_lang"] for r in rows)))
    print("supported:", dict(Counter(r["supported"] for r in rows)))
    for g in ("en", "zh", "crosslang"):
        sel = [r for r in rows if group(r) == g]
        print(f"{g}: supported {sum(r['supported'] for r in sel)} / unsupported {sum(not r['supported'] for r in sel)};",
              dict(sorted(Counter(r["kind"] for r in sel).items())))
    for p in problems:
        print("PROBLEM", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
