"""Client settings."""

MAX_ATTEMPTS = 3
TIMEOUT_S = 5.0
