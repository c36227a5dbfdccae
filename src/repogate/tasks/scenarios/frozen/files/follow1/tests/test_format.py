from shipping import format_cost, shipping_cost


def test_two_decimals_and_currency():
    assert format_cost(5) == "5.00 EUR"
    assert format_cost(12.5, "CHF") == "12.50 CHF"


def test_free_shipping_reads_free():
    assert format_cost(shipping_cost("domestic", 60.0)) == "free"
