"""Percentages of a reading against its full scale."""


def percent(reading: int, full_scale: int) -> int:
    """The reading as a whole percentage of the full scale (rounded down)."""
    return clamp_percent(reading * 100 // full_scale)


def clamp_percent(value: int) -> int:
    """The percentage as shown on the gauge: below 0 shows 0, above 100 shows 100."""
    if value > 100:
        return 100
    if value < 0:
        return 0
    return value
