from gauge.percent import clamp_percent, percent


def test_half_scale():
    assert percent(5, 10) == 50


def test_in_range_unchanged():
    assert clamp_percent(42) == 42
