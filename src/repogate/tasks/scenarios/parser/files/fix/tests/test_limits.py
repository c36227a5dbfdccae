import pytest

from confparse import ConfigError, parse


@pytest.mark.parametrize("text", ["retries=11", "timeout=301", "timeout=1000"])
def test_upper_bounds(text):
    with pytest.raises(ConfigError):
        parse(text)


def test_unknown_key_rejected():
    with pytest.raises(ConfigError, match="colour"):
        parse("colour=blue")


@pytest.mark.parametrize("text", ["retries=10", "timeout=300", "timeout=1"])
def test_bounds_inclusive(text):
    parse(text)
