"""Client settings."""

MAX_ATTEMPTS = 3
TIMEOUT_S = 10.0
