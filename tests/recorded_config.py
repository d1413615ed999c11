"""Compare a config kept in a record (JSON, floats to 7 significant digits) with today's."""

import math


def assert_same(recorded, current, where=""):
    """Recorded and current config values agree (floats to 1e-6 relative, sequences as lists,
    nested configs field by field)."""
    if isinstance(current, float) and isinstance(recorded, int | float):
        assert math.isclose(recorded, current, rel_tol=1e-6), where
    elif isinstance(current, dict):
        assert isinstance(recorded, dict) and set(recorded) == set(current), (
            f"{where}: fields changed; record again"
        )
        for key, value in current.items():
            assert_same(recorded[key], value, f"{where}.{key}")
    elif isinstance(current, list | tuple):
        assert isinstance(recorded, list) and len(recorded) == len(current), where
        for i, (r, c) in enumerate(zip(recorded, current, strict=True)):
            assert_same(r, c, f"{where}[{i}]")
    else:
        assert recorded == current, where
