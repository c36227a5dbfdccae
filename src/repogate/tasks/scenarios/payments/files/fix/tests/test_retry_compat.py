from payments import RetryPolicy, call_with_retries


def test_zero_timeout_means_library_default():
    """A duration of 0 means the library default, as the interface's conventions say."""
    seen = []
    call_with_retries(lambda timeout_s: seen.append(timeout_s) or "paid", RetryPolicy(timeout_s=0))
    assert seen == [5.0]
