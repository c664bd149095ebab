"""The reliability table (docs/RELIABILITY.md) is written by these tests, never by hand.

Each test records what it tried and what happened with the `reliability` fixture:

    def test_truncated_pdf(reliability, ...):
        ...                                   # try it, assert the behaviour
        reliability.record("Hostile input", "truncated PDF", "refused: 'x.pdf' could not be read …")

A row is written only when the test passes (a failed test shows as FAILED in the table). When the whole
`tests/reliability` folder ran, the table goes to docs/RELIABILITY.md; a partial run (-k, one file)
writes test-artefacts/RELIABILITY.md instead, so a partial run never shrinks the committed table.
"""
from __future__ import annotations

import datetime as _dt
import platform
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
SECTIONS = ("Hostile input", "Fault", "Crash", "Load", "Isolation and access", "Settings", "Limits")


@dataclass
class Row:
    section: str
    case: str
    result: str
    test: str
    passed: bool | None = None


@dataclass
class Table:
    rows: list[Row] = field(default_factory=list)
    figures: list[tuple[str, str]] = field(default_factory=list)
    collected: set[str] = field(default_factory=set)
    ran: set[str] = field(default_factory=set)
    deselected: bool = False      # -k or -m left out a reliability test: a partial run


_TABLE = Table()


class Recorder:
    def __init__(self, nodeid: str):
        self.nodeid = nodeid
        self.rows: list[Row] = []

    def record(self, section: str, case: str, result: str) -> None:
        """One line of the table: what was tried (`case`) and what the person saw or the test measured."""
        if section not in SECTIONS:
            raise ValueError(f"unknown section {section!r}; one of {SECTIONS}")
        self.rows.append(Row(section, case, " ".join(str(result).split()), self.nodeid))

    def figure(self, name: str, value: str) -> None:
        """A measured figure for the summary (e.g. "questions during ingest p95", "1.9 s")."""
        _TABLE.figures.append((name, value))


@pytest.fixture
def reliability(request) -> Recorder:
    recorder = Recorder(request.node.nodeid)
    yield recorder
    rep = getattr(request.node, "rep_call", None)
    passed = bool(rep and rep.passed)
    for row in recorder.rows:
        row.passed = passed
    _TABLE.rows.extend(recorder.rows)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.when == "call":
        item.rep_call = report
    if report.when == "call" or (report.when == "setup" and not report.passed):
        if str(item.path).startswith(str(HERE)):
            _TABLE.ran.add(item.nodeid)


def pytest_collection_modifyitems(session, config, items):
    _TABLE.collected.update(i.nodeid for i in items if str(i.path).startswith(str(HERE)))


def pytest_deselected(items):
    if any(str(i.path).startswith(str(HERE)) for i in items):
        _TABLE.deselected = True


def _all_reliability_tests_ran() -> bool:
    # Deselection is what makes a run partial, not -m as such: pytest.ini's default `-m "not books"`
    # leaves every reliability test in.
    if not _TABLE.collected or _TABLE.deselected:
        return False
    every = {p for p in HERE.glob("test_*.py")}
    ran_files = {(ROOT / n.split("::")[0]).resolve() for n in _TABLE.ran}
    return every <= ran_files and _TABLE.collected <= _TABLE.ran


def _markdown() -> str:
    lines = ["# Reliability", "",
             "Written by `pytest tests/reliability` (part of `make test`); do not edit by hand.",
             f"Last full run: {_dt.datetime.now(_dt.timezone.utc):%Y-%m-%d %H:%M} UTC on "
             f"{platform.machine()}, {platform.python_version()}.", ""]
    total = len(_TABLE.rows)
    ok = sum(1 for r in _TABLE.rows if r.passed)
    lines += [f"**{ok} of {total} cases held.**", ""]
    for section in SECTIONS:
        n = sum(1 for r in _TABLE.rows if r.section == section)
        if n:
            held = sum(1 for r in _TABLE.rows if r.section == section and r.passed)
            lines.append(f"- {section}: {held}/{n}")
    if _TABLE.figures:
        lines += ["", "## Figures", "", "| figure | value |", "|---|---|"]
        lines += [f"| {name} | {value} |" for name, value in _TABLE.figures]
    for section in SECTIONS:
        rows = [r for r in _TABLE.rows if r.section == section]
        if not rows:
            continue
        lines += ["", f"## {section}", "", "| case | result | held | test |", "|---|---|---|---|"]
        for r in rows:
            cell = r.result.replace("|", "\\|")
            lines.append(f"| {r.case.replace('|', '/')} | {cell} | {'yes' if r.passed else 'FAILED'} "
                         f"| `{r.test.split('::', 1)[-1]}` |")
    return "\n".join(lines) + "\n"


def pytest_sessionfinish(session, exitstatus):
    if not _TABLE.rows:
        return
    if _all_reliability_tests_ran():
        target = ROOT / "docs" / "RELIABILITY.md"
    else:
        target = ROOT / "test-artefacts" / "RELIABILITY.md"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(_markdown(), encoding="utf-8")
