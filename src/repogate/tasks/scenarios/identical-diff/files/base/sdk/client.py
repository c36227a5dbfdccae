"""Calls with a timeout, retried a few times."""

from sdk.settings import MAX_ATTEMPTS, TIMEOUT_S


def call(operation):
    """Call ``operation(timeout_s)``, retrying on TimeoutError up to MAX_ATTEMPTS times."""
    for attempt in range(MAX_ATTEMPTS):
        try:
            return operation(TIMEOUT_S)
        except TimeoutError:
            if attempt + 1 == MAX_ATTEMPTS:
                raise
