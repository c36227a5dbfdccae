"""Percentages of a reading against its full scale."""


def percent(reading: int, full_scale: int) -> int:
    """The reading as a whole percentage of the full scale (rounded down)."""
    return clamp_percent(reading * 100 // full_scale)


def clamp_percent(value: int) -> int:
    """The percentage as shown on the gauge."""
    return value
