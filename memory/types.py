"""Typed models of the memory system: what MemoryManager takes and returns.

Timestamps are timezone-aware UTC `datetime`s in the API and epoch seconds in the stores.
Naive datetimes and ISO strings given by callers are read as UTC (imports carry their own times).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from enum import Enum

from core.errors import InvalidRequest


class MemoryType(str, Enum):
    WORKING = "working"        # in process: capacity + TTL, lost on restart by design
    EPISODIC = "episodic"      # what happened: SQLite + Qdrant, sessions, time-ordered
    SEMANTIC = "semantic"      # what is known: SQLite + Qdrant + the entity graph
    PERCEPTUAL = "perceptual"  # images and other non-text inputs, searchable by their description

    @classmethod
    def parse(cls, value: "MemoryType | str") -> "MemoryType":
        if isinstance(value, MemoryType):
            return value
        try:
            return cls(str(value).strip().lower())
        except ValueError:
            names = ", ".join(t.value for t in cls)
            raise InvalidRequest(f"Unknown memory type '{value}'; use one of: {names}.") from None


class MemoryNotFound(InvalidRequest):
    """No memory with that id exists for this user (other users' memories are never visible)."""


class ForgetStrategy(str, Enum):
    IMPORTANCE = "importance_based"  # remove memories with importance below `threshold`
    TIME = "time_based"              # remove memories older than `max_age_days`
    CAPACITY = "capacity_based"      # keep at most `capacity` per memory type, dropping the least important/oldest

    @classmethod
    def parse(cls, value: "ForgetStrategy | str") -> "ForgetStrategy":
        if isinstance(value, ForgetStrategy):
            return value
        aliases = {"importance": cls.IMPORTANCE, "time": cls.TIME, "capacity": cls.CAPACITY}
        v = str(value).strip().lower()
        if v in aliases:
            return aliases[v]
        try:
            return cls(v)
        except ValueError:
            names = ", ".join(s.value for s in cls)
            raise InvalidRequest(f"Unknown forget strategy '{value}'; use one of: {names}.") from None


def to_utc(value: "datetime | str | float | int | None", *, default_now: bool = True) -> datetime | None:
    """A timezone-aware UTC datetime from a datetime, an ISO-8601 string or epoch seconds."""
    if value is None:
        return datetime.now(timezone.utc) if default_now else None
    if isinstance(value, datetime):
        dt = value
    elif isinstance(value, (int, float)):
        dt = datetime.fromtimestamp(float(value), tz=timezone.utc)
    elif isinstance(value, str):
        try:
            dt = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            raise InvalidRequest(
                f"Cannot read the time '{value}'; give an ISO-8601 time such as 2024-05-08T13:56:00.") from None
    else:
        raise InvalidRequest(f"Cannot read a time from {type(value).__name__}; give an ISO-8601 string or a datetime.")
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return dt.astimezone(timezone.utc)


@dataclass
class MemoryItem:
    """One memory. On search hits `score` is the final score and `score_parts` its documented parts."""
    id: str
    user_id: str
    memory_type: MemoryType
    content: str
    importance: float
    timestamp: datetime
    metadata: dict = field(default_factory=dict)
    session_id: str | None = None
    score: float | None = None
    score_parts: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["memory_type"] = self.memory_type.value
        d["timestamp"] = self.timestamp.isoformat()
        return d


@dataclass
class ForgetResult:
    strategy: ForgetStrategy
    removed_ids: list[str]           # with dry_run: the ids that WOULD be removed
    dry_run: bool = False

    @property
    def removed(self) -> int:
        return len(self.removed_ids)


@dataclass
class Promotion:
    """A consolidated memory: `source_id` (of `source_type`) was copied into `new_id` (of `target_type`)."""
    source_id: str
    source_type: MemoryType
    new_id: str
    target_type: MemoryType


@dataclass
class ConsolidateResult:
    promotions: list[Promotion]

    @property
    def promoted(self) -> int:
        return len(self.promotions)


@dataclass
class MemoryStats:
    user_id: str
    counts: dict[str, int]          # memory type -> number of memories
    total: int
    vectors: dict[str, int]         # memory type -> vectors stored in Qdrant
    graph: dict[str, int]           # entities / relations / memory_links of this user
    working_capacity: int
    working_ttl_minutes: int


@dataclass
class MemorySummary:
    user_id: str
    counts: dict[str, int]
    recent: list[MemoryItem]        # newest first
    important: list[MemoryItem]     # most important first
    top_entities: list[str]
    text: str                       # a short human-readable summary


@dataclass
class ClearResult:
    removed: dict[str, int]         # memory type -> memories removed

    @property
    def total(self) -> int:
        return sum(self.removed.values())
