"""The term's plan, ``course/plan.json``: intro.md's tables and the schedule files come from it.

``write_public()`` (part of ``make course``) rewrites the plan's two tables in ``intro.md`` (between
the ``% plan:`` comment lines) and ``course/schedule.csv`` (weeks, no dates). The bundle writes a
dated ``schedule.csv`` and an iCalendar ``schedule.ics`` (:func:`dated`, :func:`icalendar`) for
a term that starts on a given Monday: the meetings and the deadlines (the plan's ``due`` list),
at the plan's local times in its ``timezone``, written in UTC in the calendar (RFC 5545).
"""

from __future__ import annotations

import csv
import datetime as dt
import hashlib
import io
import json
import re
import zoneinfo
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
        PlanError: the weights of the grading parts do not add up to 100, a part has no whole
            number of items or no points, the time zone is not an IANA name, or a deadline's
            week, weekday or time is not one.
    """
    plan = json.loads(path.read_text(encoding="utf-8"))
    total = sum(part["weight"] for part in plan["grading"])
    if total != 100:
        raise PlanError(f"{path}: the grading weights add up to {total}, not 100")
    for part in plan["grading"]:
        items, points = part.get("items"), part.get("points")
        if isinstance(items, bool) or not isinstance(items, int) or items < 1:
            raise PlanError(f"{path}: grading {part['part']!r}: items must be a whole number >= 1")
        if isinstance(points, bool) or not isinstance(points, (int, float)) or points <= 0:
            raise PlanError(f"{path}: grading {part['part']!r}: points (of each item) must be > 0")
    timezone(plan.get("timezone", "UTC"), f"{path}: timezone")
    weeks = {m["week"] for m in plan["meetings"]}
    for due in plan.get("due", []):
        where = f"{path}: due {due.get('item')!r}"
        if due.get("week") not in weeks:
            raise PlanError(f"{where}: week {due.get('week')!r} is not a week of the plan")
        if due.get("weekday") not in range(7):
            raise PlanError(f"{where}: weekday must be 0 (Monday) to 6 (Sunday), not {due.get('weekday')!r}")
        _clock(due.get("time"), where)
    return plan


def timezone(name: str, argument: str = "--timezone") -> zoneinfo.ZoneInfo:
    """The time zone of the plan's local times.

    Args:
        name: an IANA time zone name such as ``Europe/London`` (or ``UTC``).
        argument: what to call it in an error.

    Returns:
        The zone.

    Raises:
        PlanError: no such zone in the system's (or the ``tzdata`` package's) database.
    """
    try:
        return zoneinfo.ZoneInfo(str(name))
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise PlanError(
            f"{argument} {name!r} is not a time zone name such as 'Europe/London' or 'UTC'"
        ) from None


def _clock(text, where: str) -> dt.time:
    try:
        return dt.time.fromisoformat(str(text))
    except ValueError:
        raise PlanError(f"{where}: time {text!r} is not HH:MM") from None


def _event_title(row: dict) -> str:
    # the exam row's week is "Final": "week Final exam" reads badly in a calendar
    if row["week"] == "Final":
        return f"final {row['meeting'].lower()}"
    optional = " (optional)" if str(row.get("what", "")).startswith("optional") else ""
    return f"week {row['week']} {row['meeting'].lower()}{optional}"


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
    grading = ["| Part | Weight | Points | How it is graded |", "|---|---|---|---|"]
    for part in plan["grading"]:
        several = part["items"] > 1
        weight = f"{part['weight']} %" + (f" ({weight_each(part):g} % each)" if several else "")
        points = f"{part['points']:g}" + (" each" if several else "")
        grading.append(f"| {part['part']} | {weight} | {points} | {part['how']} |")
    return "\n".join(rows), "\n".join(grading)


def weight_each(part: dict) -> float:
    """The weight of one item of a grading part, in per cent of the grade.

    Example:
        >>> weight_each({"part": "Assignments 1–5", "weight": 20, "items": 5, "points": 10})
        4.0
    """
    return part["weight"] / part["items"]


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
        Rows with week, meeting, date, start, minutes, what (readings have no date); each week's
        deadlines (meeting ``Due``, no minutes) follow its meetings.

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

    def day(week, weekday):
        return (monday + dt.timedelta(weeks=week - 1, days=weekday)).isoformat() if monday else ""

    rows = []
    meetings = plan["meetings"]
    for i, m in enumerate(meetings):
        slot = plan["slots"].get(m["meeting"])
        rows.append(
            {
                "week": _week(m),
                "meeting": m["meeting"],
                "date": day(m["week"], slot["weekday"]) if slot else "",
                "start": slot["start"] if slot else "",
                "minutes": slot["minutes"] if slot else "",
                "what": m["what"],
            }
        )
        if i + 1 == len(meetings) or meetings[i + 1]["week"] != m["week"]:
            for due in sorted(
                (d for d in plan.get("due", []) if d["week"] == m["week"]),
                key=lambda d: (d["weekday"], d["time"]),
            ):
                rows.append(
                    {
                        "week": _week(m),
                        "meeting": "Due",
                        "date": day(due["week"], due["weekday"]),
                        "start": due["time"],
                        "minutes": "",
                        "what": f"{due['item']} due",
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


def _escape(text: str) -> str:
    # RFC 5545 §3.3.11: a TEXT value escapes backslash, semicolon, comma and line breaks
    text = text.replace("\\", "\\\\").replace(";", "\\;").replace(",", "\\,")
    return text.replace("\r\n", "\\n").replace("\n", "\\n")


def fold(line: str, limit: int = 75) -> str:
    r"""One content line folded as RFC 5545 §3.1 asks: no physical line longer than 75 octets.

    Each continuation starts with a space (which counts in its 75); a UTF-8 character is never
    split between two lines.

    Args:
        line: the content line, without its line break.
        limit: the most octets of a physical line.

    Returns:
        The physical lines joined by CRLF + space.

    Example:
        >>> folded = fold("DESCRIPTION:" + "α" * 40)
        >>> [len(part.encode()) for part in folded.split("\r\n")]
        [74, 19]
        >>> folded.replace("\r\n ", "") == "DESCRIPTION:" + "α" * 40
        True
    """
    parts, current, size = [], "", 0
    for char in line:
        width = len(char.encode("utf-8"))
        if size + width > limit:
            parts.append(current)
            current, size = " ", 1
        current += char
        size += width
    return "\r\n".join([*parts, current])


def _utc(date: str, clock: str, zone: zoneinfo.ZoneInfo) -> dt.datetime:
    local = dt.datetime.combine(dt.date.fromisoformat(date), dt.time.fromisoformat(clock), tzinfo=zone)
    return local.astimezone(dt.timezone.utc)


def icalendar(
    rows: list[dict],
    course: str = "Sparse attention (the entmax book)",
    zone: str = "Europe/London",
    stamp: dt.datetime | None = None,
) -> str:
    """The dated meetings and deadlines as an iCalendar file (RFC 5545).

    Times are the plan's local times in ``zone``, written in UTC (``...Z``), so that a calendar
    shows them right wherever it is. Each event's UID is made from the course, the date and what
    the event is (the meeting, or the item due), so that importing the calendar again (a
    corrected plan) updates the events instead of doubling them, and two terms never share one.
    A deadline is an event of no duration at the time it is due, with a reminder a day before.
    Lines end with CRLF and are folded at 75 octets.

    Args:
        rows: the rows of :func:`dated` with dates (rows without a date are left out).
        course: the calendar's and the events' title.
        zone: the IANA time zone of the rows' times (the plan's ``timezone``).
        stamp: when the file was made (``DTSTAMP``; default: now).

    Returns:
        The ``.ics`` text.

    Raises:
        PlanError: ``zone`` is not a time zone.
    """
    tz = timezone(zone, "timezone")
    stamp = (stamp or dt.datetime.now(dt.timezone.utc)).astimezone(dt.timezone.utc)
    lines = [
        "BEGIN:VCALENDAR",
        "VERSION:2.0",
        "PRODID:-//entmax book//course kit//EN",
        "CALSCALE:GREGORIAN",
        "METHOD:PUBLISH",
        f"X-WR-CALNAME:{_escape(course)}",
        f"X-WR-TIMEZONE:{zone}",
    ]
    for row in rows:
        if not row["date"] or not row["start"]:
            continue
        begin = _utc(row["date"], row["start"], tz)
        # what the event is, not its wording: a corrected description keeps its event
        identity = f"{course}|{row['date']}|{row['meeting']}" + (
            f"|{row['what']}" if row["meeting"] == "Due" else ""
        )
        uid = hashlib.sha256(identity.encode()).hexdigest()[:32]
        event = [
            "BEGIN:VEVENT",
            f"UID:{uid}@entmax-book",
            f"DTSTAMP:{stamp:%Y%m%dT%H%M%SZ}",
            f"DTSTART:{begin:%Y%m%dT%H%M%SZ}",
        ]
        if row["meeting"] == "Due":
            event += [
                "SUMMARY:" + _escape(f"{course}: {row['what']}"),
                "TRANSP:TRANSPARENT",
                "CATEGORIES:DEADLINE",
                "BEGIN:VALARM",
                "ACTION:DISPLAY",
                f"DESCRIPTION:{_escape(row['what'] + ' tomorrow')}",
                "TRIGGER:-P1D",
                "END:VALARM",
            ]
        else:
            end = begin + dt.timedelta(minutes=int(row["minutes"]))
            event += [
                f"DTEND:{end:%Y%m%dT%H%M%SZ}",
                "SUMMARY:" + _escape(f"{course}: {_event_title(row)}"),
                f"DESCRIPTION:{_escape(row['what'])}",
            ]
        lines += [*event, "END:VEVENT"]
    lines.append("END:VCALENDAR")
    return "".join(fold(line) + "\r\n" for line in lines)


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
