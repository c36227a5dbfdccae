"""Retrying payment calls that time out."""

import time

from payments.client_gen import RetryPolicy

DEFAULT_BACKOFF_S = 0.5
TIMEOUT_S = 5.0  # every attempt may take at most five seconds


class RetriesExhausted(Exception):
    """Every attempt timed out."""


def attempt_timeout(policy):
    """Return how long one attempt may take, in seconds."""
    return TIMEOUT_S


def backoff(policy):
    """Return the pause between attempts, in seconds (0 means the library default)."""
    return policy.backoff_s or DEFAULT_BACKOFF_S


def call_with_retries(operation, policy=None, sleep=time.sleep):
    """Call ``operation(timeout_s)`` until it returns, retrying on TimeoutError.

    Raises:
        RetriesExhausted: all ``policy.max_attempts`` attempts timed out.
    """
    policy = policy or RetryPolicy()
    last_error = None
    for attempt in range(policy.max_attempts):
        try:
            return operation(attempt_timeout(policy))
        except TimeoutError as error:
            last_error = error
            if attempt + 1 < policy.max_attempts:
                sleep(backoff(policy))
    raise RetriesExhausted(f"gave up after {policy.max_attempts} attempts") from last_error
