"""Client settings."""

BASE_URL = 'https://api.example.com'
MAX_ATTEMPTS = 3
TIMEOUT_S = 10.0
