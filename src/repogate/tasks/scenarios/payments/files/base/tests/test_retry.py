import pytest

from payments import RetriesExhausted, RetryPolicy, call_with_retries


class Flaky:
    """Times out ``failures`` times, then answers; records the timeout of every attempt."""

    def __init__(self, failures):
        self.failures = failures
        self.timeouts = []

    def __call__(self, timeout_s):
        self.timeouts.append(timeout_s)
        if len(self.timeouts) <= self.failures:
            raise TimeoutError("no answer")
        return "paid"


def test_retries_until_an_attempt_succeeds():
    call = Flaky(failures=2)
    assert call_with_retries(call, sleep=lambda s: None) == "paid"
    assert len(call.timeouts) == 3


def test_gives_up_after_max_attempts():
    with pytest.raises(RetriesExhausted):
        call_with_retries(Flaky(failures=5), RetryPolicy(max_attempts=2), sleep=lambda s: None)


def test_zero_backoff_means_library_default():
    pauses = []
    call_with_retries(Flaky(failures=1), RetryPolicy(backoff_s=0), sleep=pauses.append)
    assert pauses == [0.5]
