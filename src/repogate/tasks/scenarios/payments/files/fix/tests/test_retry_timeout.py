from payments import RetryPolicy, call_with_retries


def timeouts_seen(policy=None, failures=0):
    """Run one call through the retry loop; return the timeout each attempt was given."""
    seen = []

    def operation(timeout_s):
        seen.append(timeout_s)
        if len(seen) <= failures:
            raise TimeoutError("no answer")
        return "paid"

    call_with_retries(operation, policy, sleep=lambda s: None)
    return seen


def test_timeout_is_configurable():
    assert timeouts_seen(RetryPolicy(timeout_s=2.5)) == [2.5]


def test_timeout_applies_to_every_attempt():
    assert timeouts_seen(RetryPolicy(timeout_s=1.5), failures=2) == [1.5, 1.5, 1.5]


def test_default_timeout_is_five_seconds():
    assert timeouts_seen() == [5.0]

