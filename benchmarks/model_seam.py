"""Harness cost of one model call through the model seam, against a bare HTTP request, in one run.

Both send the same chat-completion request to the same scripted endpoint on loopback
(`tests/_model_endpoint.py`): the seam (a `Meter` with its budget checks and trajectory record,
an `OpenAIModel` reusing the attempt's one `openai` client) against one `urllib` POST with the same
body; a seam call that makes a new client each time (the first design) is printed beside them. Calls alternate; medians are compared. A real endpoint's answer
takes seconds, so the figure says whether the seam's own milliseconds matter.
Usage: `uv run python benchmarks/model_seam.py [--calls N]`. Last line: `ratio: <x>`.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from _model_endpoint import scripted_endpoint  # noqa: E402
from repogate.models.meter import Budget, Meter  # noqa: E402
from repogate.models.openai_compat import OpenAIModel, Sampling  # noqa: E402
from repogate.models.trajectory import Recorder  # noqa: E402
from repogate.protocols import ChatMessage  # noqa: E402

PROMPT = [ChatMessage(role="system", content="s"), ChatMessage(role="user", content="x" * 4000)]


def bare(url: str) -> float:
    body = {
        "model": "m",
        "messages": [m.model_dump() for m in PROMPT],
        "temperature": 0.0,
        "max_tokens": 4096,
    }
    request = urllib.request.Request(  # noqa: S310 - loopback, our own server
        f"{url}/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "Authorization": "Bearer bench"},
    )
    start = time.perf_counter()
    with urllib.request.urlopen(request) as answer:  # noqa: S310 - loopback, our own server
        json.loads(answer.read())
    return time.perf_counter() - start


def seam(meter: Meter) -> float:
    start = time.perf_counter()
    meter.complete(PROMPT)
    return time.perf_counter() - start


def fresh(_: Meter) -> float:
    """A seam call whose model makes a new client (the first design: ~0.1 s to make one)."""
    return seam(Meter(OpenAIModel("m", Sampling()), Budget(wall_time_s=3600), Recorder()))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    os.environ["OPENAI_API_KEY"] = "bench-key"
    with scripted_endpoint(["a reply"]) as endpoint:
        os.environ["OPENAI_BASE_URL"] = endpoint.base_url
        meter = Meter(OpenAIModel("m", Sampling()), Budget(wall_time_s=3600), Recorder())
        seam(meter), bare(endpoint.base_url)  # warm both paths once
        seams, bares, freshes = [], [], []
        for _ in range(args.calls):
            seams.append(seam(meter))
            bares.append(bare(endpoint.base_url))
            freshes.append(fresh(meter))
    s, b, f = (statistics.median(x) for x in (seams, bares, freshes))
    print(f"calls: {args.calls} each; median seam {s * 1000:.2f} ms, bare POST {b * 1000:.2f} ms")
    print(f"a new client per call (the first design): {f * 1000:.2f} ms")
    print(f"seam overhead per call: {(s - b) * 1000:.2f} ms")
    print(f"ratio: {s / b:.2f}")


if __name__ == "__main__":
    main()
