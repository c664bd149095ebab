"""How well the support check (rag.support) tells backed sentences from unbacked ones, on labelled pairs.

    python -m rag.support_eval [evalsets/support_pairs/pairs.jsonl] [--show-errors] [--judge auto --sweep]

Each line of the file: {"id", "sentence", "passage", "supported": bool, "lang", "passage_lang", "kind"}. The
check *rejects* a sentence when it finds the passage does not back it. Printed, as the last line, one JSON
object: `reject_precision` (of the sentences it rejects, the share truly unsupported), `reject_recall` (of the
unsupported sentences, the share it rejects), the same per group (en, zh, cross-language) and per half (ids
ending in an even / odd number: a check tuned on one half can be read on the other), and per kind the share
rejected. With a judge, --sweep also prints, for each threshold on the judge's "no", the figures per half
(rag.support.JUDGE_REJECTS is the one in use): a threshold chosen on one half is read on the other.
"""
from __future__ import annotations

import argparse
import json
import logging
import re
import tempfile
import time
from collections import defaultdict
from pathlib import Path

DEFAULT_PAIRS = Path(__file__).resolve().parents[1] / "evalsets" / "support_pairs" / "pairs.jsonl"


def scores(rows: list[tuple[dict, bool]]) -> dict:
    """rows: (pair, rejected)."""
    tp = sum(1 for p, r in rows if r and not p["supported"])
    fp = sum(1 for p, r in rows if r and p["supported"])
    fn = sum(1 for p, r in rows if not r and not p["supported"])
    return {"n": len(rows),
            "reject_precision": round(tp / (tp + fp), 4) if tp + fp else None,
            "reject_recall": round(tp / (tp + fn), 4) if tp + fn else None}


def group_of(pair: dict) -> str:
    return "cross" if pair.get("lang") != pair.get("passage_lang") else pair.get("lang", "en")


def half_of(pair: dict) -> str:
    digits = re.findall(r"\d+", pair.get("id", "0"))
    return "even" if int(digits[-1] if digits else 0) % 2 == 0 else "odd"


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(prog="python -m rag.support_eval", description=__doc__.split("\n")[0])
    parser.add_argument("pairs", type=Path, nargs="?", default=DEFAULT_PAIRS)
    parser.add_argument("--show-errors", action="store_true", help="print every pair the check gets wrong")
    parser.add_argument("--judge", default="none",
                        help="SUPPORT_JUDGE for the check: none (words and meaning), auto, or a packaged model name")
    parser.add_argument("--limit", type=int, help="only the first N pairs")
    parser.add_argument("--sweep", action="store_true", help="with a judge: the figures at other thresholds")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    from core.settings import Settings
    from core.embeddings import get_embedder, get_multilingual_embedder
    from rag.support import check

    pairs = [json.loads(line) for line in open(args.pairs, encoding="utf-8") if line.strip()][:args.limit]
    with tempfile.TemporaryDirectory(prefix="support-eval-") as tmp:
        settings = Settings(_env_file=None, data_dir=Path(tmp), llm_backend="none", support_judge=args.judge)
        from core.llm import get_judge
        judge = get_judge(settings)
        from core.vectors import get_vector_store
        from rag.dense import DenseSpaces
        embedders = DenseSpaces(get_vector_store(settings), "eval", "support", get_embedder(settings),
                                get_multilingual_embedder(settings))
        rows, judged, started = [], [], time.perf_counter()
        for pair in pairs:
            verdict = check(pair["sentence"], pair["passage"], embedders, judge)
            rows.append((pair, not verdict.supported))
            # the judge's yes, when it was the judge that decided (a rule's rejection stands at any threshold)
            judged.append(verdict.details.get("p_yes") if verdict.reason in ("", "judge") else None)
            if args.show_errors and (not verdict.supported) == pair["supported"]:
                print(json.dumps({"id": pair["id"], "kind": pair["kind"], "supported": pair["supported"],
                                  "reason": verdict.reason, "score": verdict.score, "sentence": pair["sentence"],
                                  "details": verdict.details}, ensure_ascii=False))
        seconds = time.perf_counter() - started
    by_kind: dict[str, list[bool]] = defaultdict(list)
    for pair, rejected in rows:
        by_kind[pair["kind"]].append(rejected)
    result = {"set": str(args.pairs), **scores(rows),
              "by_group": {g: scores([r for r in rows if group_of(r[0]) == g]) for g in ("en", "zh", "cross")},
              "by_half": {h: scores([r for r in rows if half_of(r[0]) == h]) for h in ("even", "odd")},
              "rejected_by_kind": {k: f"{sum(v)}/{len(v)}" for k, v in sorted(by_kind.items())},
              "ms_per_pair": round(1000 * seconds / max(1, len(rows)), 1),
              "judge": getattr(judge, "model", None) or "none"}
    if args.sweep and judge is not None:
        for line in threshold_sweep(rows, judged):
            print(json.dumps(line))
    print(json.dumps(result, ensure_ascii=False))
    return result


SWEEP = (0.3, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7, 0.8, 0.9)


def threshold_sweep(rows: list[tuple[dict, bool]], judged: list[float | None]) -> list[dict]:
    """For each threshold on the judge's "no": each half's and the whole set's figures."""
    out = []
    for threshold in SWEEP:
        moved = [(pair, rejected if p_yes is None else 1.0 - p_yes >= threshold)
                 for (pair, rejected), p_yes in zip(rows, judged)]
        out.append({"judge_rejects_at": threshold, **scores(moved),
                    **{h: scores([r for r in moved if half_of(r[0]) == h]) for h in ("even", "odd")}})
    return out


if __name__ == "__main__":
    main()
