from gauge.percent import clamp_percent, percent


def test_overrange_shows_full():
    assert clamp_percent(150) == 100


def test_overrange_reading():
    assert percent(12, 10) == 100
