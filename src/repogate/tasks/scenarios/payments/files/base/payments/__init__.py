"""A tiny payments SDK: retrying payment calls with a policy from the public client types."""

from payments.client_gen import RetryPolicy
from payments.retry import RetriesExhausted, call_with_retries

__all__ = ["RetriesExhausted", "RetryPolicy", "call_with_retries"]
