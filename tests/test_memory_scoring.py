"""The documented scoring formulas (DESIGN.md) and working memory, without any model or store."""
from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone

import pytest

from memory import scoring
from memory.types import MemoryItem, MemoryType
from memory.working import WorkingMemory, tfidf_cosines


def test_importance_factor_spans_0_8_to_1_2():
    assert scoring.importance_factor(0.0) == pytest.approx(0.8)
    assert scoring.importance_factor(0.5) == pytest.approx(1.0)
    assert scoring.importance_factor(1.0) == pytest.approx(1.2)


def test_recency_formula_and_floor():
    assert scoring.recency(0) == pytest.approx(1.0)
    assert scoring.recency(24) == pytest.approx(math.exp(-0.1))
    assert scoring.recency(24 * 10) == pytest.approx(math.exp(-1.0))
    assert scoring.recency(24 * 23) == pytest.approx(max(0.1, math.exp(-2.3)))
    assert scoring.recency(24 * 365) == 0.1          # floor
    assert scoring.recency(-5) == 1.0                # stamped in the future: counts as now


def test_episodic_and_perceptual_formula():
    v, r, imp = 0.6, 0.5, 0.25
    expected = (0.8 * v + 0.2 * r) * (0.8 + 0.4 * imp)
    assert scoring.episodic_score(v, r, imp) == pytest.approx(expected)
    assert scoring.perceptual_score(v, r, imp) == pytest.approx(expected)


def test_semantic_formula():
    assert scoring.semantic_score(0.5, 1.0, 1.0) == pytest.approx((0.7 * 0.5 + 0.3 * 1.0) * 1.2)
    assert scoring.semantic_score(0.9, 0.0, 0.0) == pytest.approx(0.7 * 0.9 * 0.8)


def test_working_formula_with_and_without_tfidf():
    assert scoring.working_score(0.4, 0.5, 0.9, 0.5) == pytest.approx((0.7 * 0.4 + 0.3 * 0.5) * 0.9 * 1.0)
    assert scoring.working_score(None, 0.5, 0.9, 1.0) == pytest.approx(0.5 * 0.9 * 1.2)  # keyword alone


def test_working_time_decay_linear_to_ttl_with_floor():
    assert scoring.working_time_decay(0, 60) == 1.0
    assert scoring.working_time_decay(30, 60) == pytest.approx(0.5)
    assert scoring.working_time_decay(59, 60) == pytest.approx(0.1)
    assert scoring.working_time_decay(600, 60) == 0.1


def test_reciprocal_rank_fusion_k60_and_scaling():
    fused = scoring.reciprocal_rank_fusion([["a", "b"], ["b", "c"]], k=60)
    assert fused["a"] == pytest.approx(1 / 61)
    assert fused["b"] == pytest.approx(1 / 62 + 1 / 61)
    assert fused["c"] == pytest.approx(1 / 62)
    assert scoring.fused_relevance(2 / 61, 2) == pytest.approx(1.0)       # first in both rankings
    assert scoring.fused_relevance(1 / 61, 2) == pytest.approx(0.5)
    assert scoring.fused_relevance(0.0, 2) == 0.0


def test_tfidf_cosine_prefers_matching_document():
    sims = tfidf_cosines(["gradient", "descent"], [["gradient", "descent", "step"], ["pasta", "recipe"]])
    assert sims[0] > 0.5 and sims[1] == 0.0


def _item(content, importance=0.5, minutes_ago=0.0, mid=None):
    ts = datetime.now(timezone.utc) - timedelta(minutes=minutes_ago)
    return MemoryItem(id=mid or content[:12], user_id="u", memory_type=MemoryType.WORKING, content=content,
                      importance=importance, timestamp=ts)


def test_working_memory_search_uses_the_formula():
    wm = WorkingMemory(capacity=10, ttl_minutes=60)
    wm.add(_item("gradient descent takes small steps", importance=0.5, mid="a"))
    wm.add(_item("the pasta recipe needs basil", importance=0.5, mid="b"))
    now = datetime.now(timezone.utc)
    hits = wm.search("gradient descent", now=now)
    assert [h.id for h in hits] == ["a"]
    p = hits[0].score_parts
    assert hits[0].score == pytest.approx(scoring.working_score(p["tfidf"], p["keyword"], p["time_decay"], 0.5))
    assert p["keyword"] == 1.0


def test_working_memory_keyword_alone_when_no_shared_term():
    wm = WorkingMemory(capacity=10, ttl_minutes=60)
    wm.add(_item("backpropagation computes gradients", mid="a"))
    hits = wm.search("backprop")  # a prefix: no TF-IDF term in common, the keyword (substring) finds it
    assert [h.id for h in hits] == ["a"]
    assert hits[0].score_parts["tfidf"] == 0.0
    assert hits[0].score == pytest.approx(1.0 * hits[0].score_parts["time_decay"] * 1.0)


def test_working_memory_capacity_evicts_least_important_then_oldest():
    wm = WorkingMemory(capacity=2, ttl_minutes=60)
    wm.add(_item("one", importance=0.9, minutes_ago=3, mid="one"))
    wm.add(_item("two", importance=0.1, minutes_ago=2, mid="two"))
    evicted = wm.add(_item("three", importance=0.5, minutes_ago=1, mid="three"))
    assert evicted == ["two"]
    assert {i.id for i in wm.items()} == {"one", "three"}


def test_working_memory_ttl_expires():
    wm = WorkingMemory(capacity=10, ttl_minutes=60)
    wm.add(_item("old thought", minutes_ago=61, mid="old"))
    wm.add(_item("fresh thought", minutes_ago=1, mid="new"))
    assert [i.id for i in wm.items()] == ["new"]


def test_hybrid_relevance_is_a_convex_combination():
    assert scoring.hybrid_relevance(0.6, 1.0) == pytest.approx(0.7 * 0.6 + 0.3 * 1.0)
    assert scoring.hybrid_relevance(-0.2, 0.5) == pytest.approx(0.3 * 0.5)     # negative cosine clamps to 0
    assert scoring.hybrid_relevance(0.6, 0.0, keyword_weight=0.0) == pytest.approx(0.6)
