import pytest

from shipping.rates import shipping_cost


@pytest.mark.parametrize(("zone", "cost"), [("domestic", 5.0), ("eu", 12.0), ("world", 20.0)])
def test_flat_rate_per_zone(zone, cost):
    assert shipping_cost(zone, 10.0) == cost


def test_unknown_zone_is_rejected():
    with pytest.raises(KeyError):
        shipping_cost("moon", 10.0)


def test_domestic_free_from_50():
    assert shipping_cost("domestic", 50.0) == 0.0
    assert shipping_cost("domestic", 80.0) == 0.0


def test_domestic_under_50_pays():
    assert shipping_cost("domestic", 49.99) == 5.0


def test_world_still_pays():
    assert shipping_cost("world", 500.0) == 20.0


def test_eu_free_from_100():
    assert shipping_cost("eu", 100.0) == 0.0
    assert shipping_cost("eu", 99.99) == 12.0
