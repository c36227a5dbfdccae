from sdk.client import call


def test_each_attempt_waits_ten_seconds():
    assert call(lambda timeout_s: timeout_s) == 10.0
