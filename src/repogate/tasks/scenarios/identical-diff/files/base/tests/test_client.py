from sdk.client import call


def test_call_retries_then_gives_up():
    attempts = []

    def operation(timeout_s):
        attempts.append(timeout_s)
        raise TimeoutError

    try:
        call(operation)
    except TimeoutError:
        pass
    assert len(attempts) == 3
