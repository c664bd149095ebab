"""Episodic memory has a cap: past EPISODIC_CAP memories of one user, the oldest everyday episodes are
rolled up into one summary memory per day.

One row per question adds up: a learner asking 30 questions a day passes 5,000 episodes in half a
year, and every memory search scores them all. What a learner would not regret losing is the detail
of old routine interactions; what they would regret is losing that those happened, or anything they
marked important. So:
- only episodes below ROLLUP_BELOW_IMPORTANCE are rolled up (questions and loaded / removed
  documents at their default importance), oldest day first; important episodes stay as they are;
- each day's episodes become ONE episodic memory ("On 2 March 2025, 37 earlier activities: Asked: …;
  Asked: …; Loaded the document …"), found by search and by "what did I study in March?"; a later
  rollup of the same day merges into it, so a day never has two;
- the count goes down to ROLLUP_TARGET_SHARE of the cap, so a rollup runs once per few hundred new
  episodes, not on every question.
Every rolled-up episode keeps its first line (clipped to LINE_CHARS) in its day's summary, up to
MAX_LINES a day; past that the summary says how many more there were.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from memory.episodic import date_label
from memory.types import MemoryItem

EPISODIC_CAP = 5000              # episodic memories per user before the oldest everyday ones are rolled up
ROLLUP_TARGET_SHARE = 0.9        # a rollup brings the count down to this share of the cap
ROLLUP_BELOW_IMPORTANCE = 0.7    # episodes at or above this importance are never rolled up
ROLLUP_KIND = "episodes_rollup"  # metadata["kind"] of a day's summary
MAX_LINES = 60                   # lines a day's summary keeps
LINE_CHARS = 160                 # each line clipped to this many characters
MAX_SOURCES = 20                 # cited sources a day's summary remembers


@dataclass
class DayRollup:
    day: date
    episodes: list[MemoryItem]          # rolled into the day's summary (then removed)
    previous: MemoryItem | None = None  # the day's earlier summary, merged into the new one (then removed)

    @property
    def replaced(self) -> list[MemoryItem]:
        return self.episodes + ([self.previous] if self.previous else [])


def local_day(item: MemoryItem) -> date:
    """The learner's calendar day of a memory (the machine's time zone, as the activity view counts days)."""
    return item.timestamp.astimezone().date()


def is_rollup(item: MemoryItem) -> bool:
    return item.metadata.get("kind") == ROLLUP_KIND


def rollable(item: MemoryItem) -> bool:
    return not is_rollup(item) and item.importance < ROLLUP_BELOW_IMPORTANCE


def plan_rollup(episodes: list[MemoryItem], excess: int) -> list[DayRollup]:
    """The days to roll up, oldest first, until the number of episodes drops by at least `excess`."""
    by_day: dict[date, list[MemoryItem]] = {}
    summaries: dict[date, MemoryItem] = {}
    for it in sorted(episodes, key=lambda e: e.timestamp):
        if is_rollup(it):
            summaries[local_day(it)] = it
        elif rollable(it):
            by_day.setdefault(local_day(it), []).append(it)
    plans, saved = [], 0
    for day in sorted(by_day):
        previous = summaries.get(day)
        saving = len(by_day[day]) - (0 if previous else 1)   # n episodes (and the old summary) become one
        if saving <= 0:
            continue
        plans.append(DayRollup(day, by_day[day], previous))
        saved += saving
        if saved >= excess:
            break
    return plans


def _first_line(item: MemoryItem) -> str:
    line = " ".join(item.content.strip().splitlines()[0].split()) if item.content.strip() else ""
    return line if len(line) <= LINE_CHARS else line[:LINE_CHARS - 1] + "…"


def summary_record(plan: DayRollup) -> dict:
    """The day's summary as a record for MemoryManager (content, importance, timestamp, metadata)."""
    old = plan.previous.metadata if plan.previous else {}
    lines = list(old.get("lines", [])) + [_first_line(it) for it in plan.episodes]
    count = int(old.get("rolled_up", 0)) + len(plan.episodes)
    questions = int(old.get("questions", 0)) + sum(1 for it in plan.episodes if it.metadata.get("kind") == "qa")
    sources = list(old.get("sources", []))
    for it in plan.episodes:
        for label in it.metadata.get("cited_labels", []) or []:
            if label not in sources:
                sources.append(label)
    kept = lines[:MAX_LINES]
    text = "; ".join(kept) + (f"; and {count - len(kept)} more." if count > len(kept) else ".")
    moments = [it.timestamp for it in plan.replaced]
    return {
        "content": f"On {date_label(plan.day)}, {count} earlier activities: {text}",
        "importance": max(it.importance for it in plan.replaced),
        "timestamp": max(moments),
        "metadata": {"kind": ROLLUP_KIND, "day": plan.day.isoformat(), "rolled_up": count, "questions": questions,
                     "lines": kept, "sources": sources[:MAX_SOURCES],
                     "first_at": old.get("first_at") or min(moments).isoformat(), "last_at": max(moments).isoformat()},
    }
