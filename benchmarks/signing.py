"""What signing costs: the embedded scenarios run unsigned and signed, and `verify` on the result.

Prints the signed run's wall time against the unsigned runs' mean (measured in the same process,
on the same warm cache, unsigned before and after the signed run; under load the run-to-run spread
is larger than signing's share), the time `verify` takes, and the time signing every decision and
the summary again takes (signing's own cost), each against the signed run. Usage: ``uv run python benchmarks/signing.py``.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from _attempts import load, plans

from repogate.provenance import generate, load_public_key, load_signer, sign_run, verify_target
from repogate.runner import RunOptions, run


def _wall(scratch: Path, cache: Path, name: str, key: Path | None) -> float:
    signer = None if key is None else load_signer(str(key))
    options = RunOptions(out=scratch / name, cache_dir=cache, signer=signer)
    start = time.perf_counter()
    records = run(plans(scratch / f"{name}-src"), options)
    wall = time.perf_counter() - start
    if any(r.status != "done" for r in records):
        raise SystemExit(f"{name}: an attempt did not finish")
    return wall


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="repogate-bench-sign-") as tmp:
        scratch = Path(tmp)
        cache = scratch / "cache"
        private, public = generate(scratch / "keys")
        _wall(scratch, cache, "warm-up", None)
        before = _wall(scratch, cache, "unsigned-1", None)
        signed = _wall(scratch, cache, "signed", private)
        after = _wall(scratch, cache, "unsigned-2", None)
        start = time.perf_counter()
        found = verify_target(scratch / "signed", load_public_key(public))
        verify = time.perf_counter() - start
        if found.problems:
            raise SystemExit(f"verify found problems: {found.problems}")
        start = time.perf_counter()
        sign_run(scratch / "signed", load_signer(str(private)), force=True)
        resign = time.perf_counter() - start
        baseline = (before + after) / 2
        print(f"embedded scenarios, {found.decisions} decisions ({load()})")
        print(f"unsigned wall {before:.1f} s and {after:.1f} s (mean {baseline:.1f} s)")
        print(f"signed wall {signed:.1f} s: ratio signed / unsigned {signed / baseline:.3f}")
        print(f"verify {verify:.3f} s: ratio verify / signed run {verify / signed:.4f}")
        print(
            f"signing every decision and the summary again {resign:.3f} s: ratio to the signed run {resign / signed:.4f}"
        )


if __name__ == "__main__":
    main()
