"""The venv records' shared fields: records stored in the earlier key order read back equal.

Both backends' records derive from one base (``environments/_venv.py``), so pydantic writes its
fields first and each backend's own after them. Every digest over a record is over sorted keys;
the digests below were taken from the records as they were written before the base existed.
"""

from __future__ import annotations

import hashlib
import json

from pydantic import TypeAdapter

from repogate.environments import EnvironmentRecord
from repogate.environments.image import ImageEnvironment
from repogate.environments.uv import UvEnvironment

UV_BEFORE = (
    '{"schema_version":1,"python":"/c/k/venv/bin/python","bin_dir":"/c/k/venv/bin","venv":"'
    '/c/k/venv","cache_key":"k","digest":"d","toolchain":{"python":"3.11.7","implementation'
    '":"CPython","platform":"linux","uv":"uv 0.5.0"},"packages":["attrs==23.1.0"],"commands'
    '":["uv pip install -e ."],"import_roots":["src"],"cold":true,"build_seconds":1.5,"time'
    'zone":"UTC","locale":"C.UTF-8","exclude_newer":"2024-01-02T00:00:00Z","services":[]}'
)
IMAGE_BEFORE = (
    '{"backend":"image","schema_version":1,"image":"sha256:aaaaaaaaaaaaaaaaaaaaaaa'
    'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa","image_kind":"rootfs","rootfs":"/c'
    '/images/a/rootfs","python":"/c/k/venv/bin/python","venv":"/c/k/venv","cache_k'
    'ey":"k2","digest":"d2","toolchain":{"python":"3.11.7","implementation":"CPyth'
    'on","platform":"linux","uv":"uv 0.5.0"},"packages":["pytest==8.0.0"],"command'
    's":[],"import_roots":[],"cold":false,"build_seconds":0.25,"unpack_seconds":0.'
    '125,"timezone":"UTC","locale":"C.UTF-8","exclude_newer":null,"services":[]}'
)
SORTED_DIGESTS = {
    "uv": "ffbc865b8b0df3b4f291d650c6a3bd06a855689a904bc25823194d9e753b4db4",
    "image": "7ab900e31af64061147ab692a9bacd9fdecd4fca92b865e37f8f3ee3c2de09ec",
}


def _sorted_digest(data: object) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()


def test_a_record_in_the_earlier_key_order_reads_back_with_the_same_sorted_digest() -> None:
    stored: TypeAdapter[UvEnvironment | ImageEnvironment] = TypeAdapter(EnvironmentRecord)
    for backend, text, kind in (
        ("uv", UV_BEFORE, UvEnvironment),
        ("image", IMAGE_BEFORE, ImageEnvironment),
    ):
        record = stored.validate_json(text)
        assert type(record) is kind
        assert record.describe() == json.loads(text)  # the same keys and values
        assert _sorted_digest(record.describe()) == SORTED_DIGESTS[backend]
        assert list(record.describe()) != list(json.loads(text))  # only the order moved
        assert kind.model_validate_json(record.model_dump_json()) == record


def test_the_shared_fields_come_first_and_each_backends_own_after_them() -> None:
    uv = list(UvEnvironment.model_fields)
    image = list(ImageEnvironment.model_fields)
    assert uv[:-1] == image[: len(uv) - 1]
    assert uv[-1:] == ["bin_dir"]
    assert image[len(uv) - 1 :] == ["backend", "image", "image_kind", "rootfs", "unpack_seconds"]
