from payments.client_gen import IdempotencyKey


def test_idempotency_key_defaults():
    key = IdempotencyKey()
    assert key.header == "Idempotency-Key"
    assert key.ttl_s == 86400.0
