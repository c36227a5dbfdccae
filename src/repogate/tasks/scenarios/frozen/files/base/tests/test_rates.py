import pytest

from shipping.rates import shipping_cost


@pytest.mark.parametrize(("zone", "cost"), [("domestic", 5.0), ("eu", 12.0), ("world", 20.0)])
def test_flat_rate_per_zone(zone, cost):
    assert shipping_cost(zone, 10.0) == cost


def test_unknown_zone_is_rejected():
    with pytest.raises(KeyError):
        shipping_cost("moon", 10.0)
