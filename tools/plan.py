"""The term's plan, ``course/plan.json``: intro.md's tables and the schedule files come from it.

``write_public()`` (part of ``make course``) rewrites the plan's two tables in ``intro.md`` (between
the ``% plan:`` comment lines) and ``course/schedule.csv`` (weeks, no dates). The bundle writes a
dated ``schedule.csv`` and an iCalendar ``schedule.ics`` (:func:`dated`, :func:`icalendar`) for
a term that starts on a given Monday.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PLAN = ROOT / "course" / "plan.json"
INTRO = ROOT / "intro.md"
SCHEDULE = ROOT / "course" / "schedule.csv"


class PlanError(ValueError):
    """A plan, a date or a page that the plan cannot be written into (a one-line message)."""


def load(path: Path = PLAN) -> dict:
    """The plan: its meetings, their time slots, the grading parts.

    Args:
        path: the plan's JSON file.

    Returns:
        The plan as a dict.

    Raises:
        PlanError: the weights of the grading parts do not add up to 100.
    """
    plan = json.loads(path.read_text(encoding="utf-8"))
    total = sum(part["weight"] for part in plan["grading"])
    if total != 100:
        raise PlanError(f"{path}: the grading weights add up to {total}, not 100")
    return plan


def _week(meeting: dict) -> str:
    return "Final" if meeting["meeting"] == "Exam" else str(meeting["week"])


def tables(plan: dict) -> tuple[str, str]:
    """The plan's two Markdown tables: week by week, and the grading suggestion.

    Args:
        plan: from :func:`load`.

    Returns:
        ``(week-by-week table, grading table)``.
    """
    rows = ["| Week | Meeting | Time | What happens |", "|---|---|---|---|"]
    rows += [f"| {_week(m)} | {m['meeting']} | {m['time']} | {m['what']} |" for m in plan["meetings"]]
    grading = ["| Part | Weight | How it is graded |", "|---|---|---|"]
    for part in plan["grading"]:
        weight = f"{part['weight']} %" + (
            f" ({part['each']} % each)" if part["each"] != part["weight"] else ""
        )
        grading.append(f"| {part['part']} | {weight} | {part['how']} |")
    return "\n".join(rows), "\n".join(grading)


def _replace(text: str, name: str, table: str) -> str:
    pattern = re.compile(rf"(^% plan: {name}\n).*?(^% plan: end {name}\n)", re.M | re.S)
    if not pattern.search(text):
        raise PlanError(
            f"intro.md has no '% plan: {name}' ... '% plan: end {name}' lines to write the table between"
        )
    return pattern.sub(lambda m: m.group(1) + "\n" + table + "\n\n" + m.group(2), text)


def intro_text(plan: dict, intro: str) -> str:
    """The introduction with the plan's tables written between its ``% plan:`` comment lines.

    Args:
        plan: from :func:`load`.
        intro: the text of ``intro.md``.

    Returns:
        The new text.
    """
    weeks, grading = tables(plan)
    return _replace(_replace(intro, "weeks", weeks), "grading", grading)


def dated(plan: dict, start: str | None) -> list[dict]:
    """The meetings as schedule rows, dated when the term's first Monday is given.

    Args:
        plan: from :func:`load`.
        start: the Monday of week 1 as ``YYYY-MM-DD``, or None for rows without dates.

    Returns:
        Rows with week, meeting, date, start, minutes, what (readings have no date).

    Raises:
        PlanError: ``start`` is not a date or not a Monday.
    """
    monday = None
    if start is not None:
        try:
            monday = dt.date.fromisoformat(start)
        except ValueError:
            raise PlanError(f"--start {start!r} is not a date YYYY-MM-DD") from None
        if monday.weekday() != 0:
            raise PlanError(f"--start {start} is a {monday:%A}; give the Monday of week 1")
    rows = []
    for m in plan["meetings"]:
        slot = plan["slots"].get(m["meeting"])
        date = monday + dt.timedelta(weeks=m["week"] - 1, days=slot["weekday"]) if slot and monday else None
        rows.append(
            {
                "week": _week(m),
                "meeting": m["meeting"],
                "date": date.isoformat() if date else "",
                "start": slot["start"] if slot else "",
                "minutes": slot["minutes"] if slot else "",
                "what": m["what"],
            }
        )
    return rows


def csv_text(rows: list[dict]) -> str:
    """The rows of :func:`dated` as CSV (a spreadsheet or a learning platform imports it).

    Args:
        rows: the schedule rows.

    Returns:
        CSV text with a header line.
    """
    out = io.StringIO()
    writer = csv.DictWriter(
        out, fieldnames=["week", "meeting", "date", "start", "minutes", "what"], lineterminator="\n"
    )
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def icalendar(rows: list[dict], course: str = "Sparse attention (the entmax book)") -> str:
    """The dated meetings as an iCalendar file (RFC 5545), one event each, in local time.

    Args:
        rows: the rows of :func:`dated` with dates.
        course: the calendar's and the events' title.

    Returns:
        The ``.ics`` text (CRLF line ends).
    """
    lines = [
        "BEGIN:VCALENDAR",
        "VERSION:2.0",
        "PRODID:-//entmax book//course kit//EN",
        f"X-WR-CALNAME:{course}",
    ]
    for i, row in enumerate(r for r in rows if r["date"]):
        begin = dt.datetime.fromisoformat(f"{row['date']}T{row['start']}")
        end = begin + dt.timedelta(minutes=int(row["minutes"]))
        what = row["what"].replace("\\", "\\\\").replace(",", "\\,").replace(";", "\\;")
        lines += [
            "BEGIN:VEVENT",
            f"UID:week{row['week']}-{row['meeting'].lower()}-{i}@entmax-book",
            "DTSTAMP:20260101T000000Z",
            f"DTSTART:{begin:%Y%m%dT%H%M%S}",
            f"DTEND:{end:%Y%m%dT%H%M%S}",
            f"SUMMARY:{course}: week {row['week']} {row['meeting'].lower()}",
            f"DESCRIPTION:{what}",
            "END:VEVENT",
        ]
    return "\r\n".join([*lines, "END:VCALENDAR", ""])


def write_public(plan_path: Path = PLAN, intro: Path = INTRO, schedule: Path = SCHEDULE) -> str:
    """Rewrite intro.md's plan tables and the undated ``course/schedule.csv`` from the plan.

    Args:
        plan_path: the plan.
        intro: the introduction page.
        schedule: the undated schedule to write.

    Returns:
        A line saying what was written.
    """
    plan = load(plan_path)
    intro.write_text(intro_text(plan, intro.read_text(encoding="utf-8")), encoding="utf-8")
    schedule.write_text(csv_text(dated(plan, None)), encoding="utf-8")
    source = plan_path.relative_to(ROOT)
    return f"the plan's tables in {intro.name} and {schedule.relative_to(ROOT)}, from {source}"
