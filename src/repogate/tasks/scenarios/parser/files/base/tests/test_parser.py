import pytest

from confparse import ConfigError, parse


def test_defaults():
    assert parse("") == {"timeout": 30, "retries": 3, "mode": "safe"}


def test_values_and_whitespace():
    assert parse(" timeout = 60 ;retries=0; mode=fast ") == {
        "timeout": 60,
        "retries": 0,
        "mode": "fast",
    }


@pytest.mark.parametrize("text", ["timeout", "timeout=abc", "timeout=0", "mode=slow", "retries=-1"])
def test_malformed(text):
    with pytest.raises(ConfigError):
        parse(text)
