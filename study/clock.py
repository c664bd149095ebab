"""The study features' clock: the real time, moved on by STUDY_CLOCK_FILE's number of days when that
setting is given (tests and demos walk through weeks of spaced review in minutes; learners never set it)."""
from __future__ import annotations

import logging
from datetime import datetime, timedelta, timezone

log = logging.getLogger(__name__)


def now(settings) -> datetime:
    moment = datetime.now(timezone.utc)
    path = getattr(settings, "study_clock_file", None)
    if not path:
        return moment
    try:
        return moment + timedelta(days=float(path.read_text(encoding="utf-8").strip() or 0))
    except (OSError, ValueError):
        log.warning("STUDY_CLOCK_FILE %s holds no number of days; the real clock is used", path)
        return moment
