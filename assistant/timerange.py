"""The period a question about one's past names: "yesterday", "last week", "3 days ago", "上周"…

This is a parser of time expressions (it decides WHEN, not WHETHER a question is about memory; the
intent router decides that). Days run in the server's local time zone, the person's day.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta

_ZH_NUM = {"一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10}
_WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]


@dataclass(frozen=True)
class Period:
    since: datetime            # timezone-aware, local
    until: datetime
    label: str                 # "yesterday", "last week", as the question said it

    def contains(self, moment: datetime) -> bool:
        return self.since <= moment < self.until


def _day_start(moment: datetime) -> datetime:
    return moment.replace(hour=0, minute=0, second=0, microsecond=0)


def _number(text: str) -> int | None:
    if text.isdigit():
        return int(text)
    if text in _ZH_NUM:
        return _ZH_NUM[text]
    words = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "a": 1, "an": 1}
    return words.get(text.lower())


def parse_period(question: str, now: datetime | None = None) -> Period | None:
    """The period named in the question, or None when it names none."""
    now = (now or datetime.now()).astimezone()
    today = _day_start(now)
    q = question.lower()
    week_start = today - timedelta(days=today.weekday())
    month_start = today.replace(day=1)

    def period(since: datetime, until: datetime, label: str) -> Period:
        return Period(since, until, label)

    if re.search(r"\bday before yesterday\b|前天", q):
        return period(today - timedelta(days=2), today - timedelta(days=1), "the day before yesterday")
    if re.search(r"\byesterday\b|昨天|昨日", q):
        return period(today - timedelta(days=1), today, "yesterday")
    if re.search(r"\btoday\b|\bthis morning\b|\btonight\b|今天|今日|刚才", q):
        return period(today, today + timedelta(days=1), "today")
    if re.search(r"\blast week\b|上周|上个星期|上星期", q):
        return period(week_start - timedelta(days=7), week_start, "last week")
    if re.search(r"\bthis week\b|本周|这周|这个星期", q):
        return period(week_start, today + timedelta(days=1), "this week")
    if re.search(r"\blast month\b|上个月|上月", q):
        prev = (month_start - timedelta(days=1)).replace(day=1)
        return period(prev, month_start, "last month")
    if re.search(r"\bthis month\b|本月|这个月", q):
        return period(month_start, today + timedelta(days=1), "this month")
    m = re.search(r"\b(\d+|one|two|three|four|five|six|seven|a|an)\s+(day|week)s?\s+ago\b", q) or \
        re.search(r"([0-9一二两三四五六七八九十]+)\s*(天|周|个星期)前", q)
    if m:
        n = _number(m.group(1)) or 1
        days = n * (7 if m.group(2) in ("week", "周", "个星期") else 1)
        start = today - timedelta(days=days)
        return period(start, start + timedelta(days=1 if m.group(2) in ("day", "天") else 7), m.group(0))
    m = re.search(r"\b(?:in the )?(?:last|past)\s+(\d+|two|three|four|five|six|seven)\s+days\b|最近([0-9一二两三四五六七八九十]+)天", q)
    if m:
        n = _number(m.group(1) or m.group(2)) or 1
        return period(today - timedelta(days=n - 1), today + timedelta(days=1), m.group(0))
    m = re.search(r"\blast (" + "|".join(_WEEKDAYS) + r")\b|\bon (" + "|".join(_WEEKDAYS) + r")\b", q)
    if m:
        target = _WEEKDAYS.index(m.group(1) or m.group(2))
        back = (today.weekday() - target) % 7 or 7
        start = today - timedelta(days=back)
        return period(start, start + timedelta(days=1), m.group(0))
    return None
