from sdk.settings import BASE_URL


def test_base_url_is_https():
    assert BASE_URL.startswith("https://")
