"""The documented scoring formulas (DESIGN.md "Scoring"), as small pure functions so tests pin them.

- working:               (0.7·tfidf + 0.3·keyword, or keyword alone) × time_decay × (0.8 + 0.4·importance)
- episodic / perceptual: (0.8·vector + 0.2·recency) × (0.8 + 0.4·importance),
                         recency = max(0.1, exp(-0.1 · age_hours / 24))
- semantic:              (0.7·vector + 0.3·graph) × (0.8 + 0.4·importance)

`vector` is the query-memory relevance in [0, 1]. For semantic memory, and in dense mode, it is the
cosine similarity (clamped at 0). In hybrid mode (the default for episodic and perceptual memory) it is
`hybrid_relevance`: 0.7·cosine + 0.3·(BM25 / the query's best BM25), a convex combination that stays
an absolute similarity, so different memory types can be ranked in one list. `reciprocal_rank_fusion`
(k = 60) is kept as the alternative fusion (`fusion="rrf"`); it measured worse on LoCoMo.
"""
from __future__ import annotations

import math


def importance_factor(importance: float) -> float:
    return 0.8 + 0.4 * importance


def recency(age_hours: float) -> float:
    """max(0.1, exp(-0.1 · age_hours / 24)): 1.0 now, ~0.90 after a day, floor 0.1 after ~23 days.
    A negative age (a memory stamped after the reference time) counts as now."""
    return max(0.1, math.exp(-0.1 * max(0.0, age_hours) / 24.0))


def working_time_decay(age_minutes: float, ttl_minutes: float) -> float:
    """Linear from 1 (just added) down to a floor of 0.1 at the TTL, when the memory expires anyway."""
    if ttl_minutes <= 0:
        return 1.0
    return max(0.1, 1.0 - max(0.0, age_minutes) / ttl_minutes)


def working_score(tfidf: float | None, keyword: float, time_decay: float, importance: float) -> float:
    """`tfidf=None` means TF-IDF had nothing to say (no shared term): the keyword score is used alone."""
    base = keyword if tfidf is None else 0.7 * tfidf + 0.3 * keyword
    return base * time_decay * importance_factor(importance)


def episodic_score(vector: float, recency_value: float, importance: float) -> float:
    return (0.8 * vector + 0.2 * recency_value) * importance_factor(importance)


perceptual_score = episodic_score


def semantic_score(vector: float, graph: float, importance: float) -> float:
    return (0.7 * vector + 0.3 * graph) * importance_factor(importance)


def hybrid_relevance(cosine: float, keyword: float, keyword_weight: float = 0.3) -> float:
    """(1 − w)·max(0, cosine) + w·keyword, keyword = BM25 / the best BM25 for this query (0..1)."""
    return (1 - keyword_weight) * max(0.0, cosine) + keyword_weight * keyword


def reciprocal_rank_fusion(rankings: list[list[str]], k: int = 60) -> dict[str, float]:
    """RRF: sum over rankings of 1 / (k + rank), rank 1-based. Higher is better."""
    fused: dict[str, float] = {}
    for ranking in rankings:
        for rank, key in enumerate(ranking, start=1):
            fused[key] = fused.get(key, 0.0) + 1.0 / (k + rank)
    return fused


def fused_relevance(rrf_value: float, n_rankings: int, k: int = 60) -> float:
    """An RRF score scaled to [0, 1]: 1.0 for a memory ranked first by every retriever."""
    return min(1.0, rrf_value / (n_rankings / (k + 1))) if n_rankings else 0.0
