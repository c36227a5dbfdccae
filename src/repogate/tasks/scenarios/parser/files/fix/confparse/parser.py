"""Parse bounded configuration strings such as ``"timeout=30; retries=3; mode=safe"``."""

DEFAULTS = {"timeout": 30, "retries": 3, "mode": "safe"}
MODES = ("fast", "safe")


class ConfigError(ValueError):
    """A configuration string that cannot be accepted."""


def _int(key, raw, low, high):
    try:
        value = int(raw)
    except ValueError:
        raise ConfigError(f"{key}: {raw!r} is not a whole number") from None
    if not low <= value <= high:
        raise ConfigError(f"{key}: {value} is outside {low}..{high}")
    return value


def parse(text):
    """Return the settings in ``text`` over the defaults."""
    settings = dict(DEFAULTS)
    for token in text.split(";"):
        token = token.strip()
        if not token:
            continue
        if "=" not in token:
            raise ConfigError(f"{token!r} is not key=value")
        key, raw = (part.strip() for part in token.split("=", 1))
        if key == "timeout":
            settings["timeout"] = _int(key, raw, 1, 300)
        elif key == "retries":
            settings["retries"] = _int(key, raw, 0, 10)
        elif key == "mode":
            if raw not in MODES:
                raise ConfigError(f"mode: {raw!r} is not one of {', '.join(MODES)}")
            settings["mode"] = raw
        else:
            raise ConfigError(f"unknown key {key!r}")
    return settings
