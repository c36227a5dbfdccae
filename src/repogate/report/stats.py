"""Statistics of a report: rates over tasks with intervals that never collapse, pass@k and pass^k.

**The estimand, stated once.** A rate (acceptance, resolved, a funnel stage, pass@1, a sentinel
failure rate) is the mean over tasks of each task's rate, epochs averaged within a task: a task
attempted five times weighs as much as a task attempted once, and the attempts (epochs) of one task
count as one correlated cluster, never as independent trials.

**The default interval** (:func:`over_tasks`) is Wilson's score interval with continuity correction
over tasks: the sum of the per-task rates as successes out of n = tasks. A per-task rate lies in
[0, 1], so its variance is at most that of a Bernoulli variable with the same mean; treating tasks
as binomial trials is conservative whatever the epochs do, and the interval never collapses to a
point (3/5 on one task gives [0.2%, 99.7%]; ten tasks at 1/2 each give [20.1%, 79.9%]).
Its measured coverage (``benchmarks/interval_coverage.py``) is at least 0.95 at 10 tasks and above; a
percentile cluster bootstrap and a cluster t-interval are kept for that comparison (both too liberal
with few tasks). Every interval carries the clustered standard error of its estimate, the standard
deviation of the per-task values over the square root of the task count (E. Miller (2024), "Adding
Error Bars to Evals", arXiv:2411.00640, section 2.2; Inspect AI's ``stderr(cluster=...)``), None
under two tasks.

Sources:
    - Wilson score interval: E. B. Wilson (1927), JASA 22:209-212 (``scipy.stats.binomtest(...)
      .proportion_ci(method="wilson")`` for whole counts); with continuity correction: R. G.
      Newcombe (1998), "Two-sided confidence intervals for the single proportion: comparison of
      seven methods", Statistics in Medicine 17:857-872, method 4 (R's ``prop.test(correct=TRUE)``).
    - Cluster bootstrap: B. Efron and R. Tibshirani (1993), "An Introduction to the Bootstrap".
    - pass@k: M. Chen et al. (2021), "Evaluating Large Language Models Trained on Code",
      arXiv:2107.03374, section 2.1, the unbiased estimator 1 - C(n-c, k) / C(n, k).
    - pass^k: S. Yao et al. (2024), "tau-bench", arXiv:2406.12045, section 5: C(c, k) / C(n, k).
"""

from __future__ import annotations

from collections.abc import Sequence
from math import comb, sqrt

import numpy as np
from scipy.stats import binomtest, norm
from scipy.stats import t as student_t

from repogate._model import FrozenModel

CONFIDENCE = 0.95
RESAMPLES = 2000
SEED = 20260105
Z = float(norm.ppf(1 - (1 - CONFIDENCE) / 2))
WILSON = "Wilson score interval"
WILSON_CC_TASKS = "Wilson score interval with continuity correction over tasks"
CLUSTER_BOOTSTRAP = f"cluster bootstrap over tasks ({RESAMPLES} resamples, percentile)"
CLUSTER_T = "t-interval on the clustered standard error (Miller 2024)"
NONE = "none (no observations)"


class Interval(FrozenModel):
    """An estimate with its 95% interval, its standard error and what it rests on.

    Attributes:
        estimate: the point estimate (a proportion in [0, 1], or a difference in [-1, 1]).
        low: lower bound of the interval.
        high: upper bound of the interval.
        se: the clustered standard error of the estimate (standard deviation of the per-task values
            over the square root of the task count); None under two tasks.
        n: the attempts it rests on (for a difference over tasks: the tasks).
        tasks: the tasks (clusters) it rests on; the interval's effective sample size.
        method: how the interval was computed, e.g. :data:`WILSON_CC_TASKS`; :data:`NONE` when no
            observation.
    """

    estimate: float
    low: float
    high: float
    se: float | None = None
    n: int
    tasks: int
    method: str


def empty(method: str = NONE) -> Interval:
    """The interval over nothing: estimate 0, the whole [0, 1], no standard error."""
    return Interval(estimate=0.0, low=0.0, high=1.0, n=0, tasks=0, method=method)


def wilson(successes: int, n: int) -> Interval:
    """Return the proportion ``successes / n`` with its 95% Wilson score interval.

    Each of the ``n`` trials is taken as its own task (one attempt per task).

    Args:
        successes: count of successes, 0 <= successes <= n.
        n: count of trials; 0 gives :func:`empty`.

    Raises:
        ValueError: ``successes`` outside [0, n].
    """
    if not 0 <= successes <= n:
        raise ValueError(f"successes {successes} outside [0, {n}]")
    if n == 0:
        return empty()
    ci = binomtest(successes, n).proportion_ci(confidence_level=CONFIDENCE, method="wilson")
    values = [1.0] * successes + [0.0] * (n - successes)
    return Interval(
        estimate=successes / n,
        low=float(ci.low),
        high=float(ci.high),
        se=cluster_se(values),
        n=n,
        tasks=n,
        method=WILSON,
    )


def wilson_bounds(x: float, n: int, z: float = Z) -> tuple[float, float]:
    """Wilson's score bounds for ``x`` successes (a whole or fractional count) out of ``n`` > 0."""
    centre = (x + z * z / 2) / (n + z * z)
    half = z / (n + z * z) * sqrt(max(x * (n - x) / n, 0.0) + z * z / 4)
    return max(centre - half, 0.0), min(centre + half, 1.0)


def wilson_cc_bounds(x: float, n: int, z: float = Z) -> tuple[float, float]:
    """Wilson's bounds with continuity correction (Newcombe 1998, method 4) for ``x`` of ``n`` > 0.

    ``x`` may be fractional (a sum of per-task rates); at ``x = 0`` the lower bound is 0 and at
    ``x = n`` the upper bound is 1, as in the method.
    """
    p = x / n
    q = 1 - p
    low, high = 0.0, 1.0
    if x > 0:
        root = sqrt(max(z * z - 2 - 1 / n + 4 * p * (n * q + 1), 0.0))
        low = (2 * n * p + z * z - 1 - z * root) / (2 * (n + z * z))
    if x < n:
        root = sqrt(max(z * z + 2 - 1 / n + 4 * p * (n * q - 1), 0.0))
        high = (2 * n * p + z * z + 1 + z * root) / (2 * (n + z * z))
    return min(max(low, 0.0), p), max(min(high, 1.0), p)


def cluster_se(values: Sequence[float]) -> float | None:
    """The clustered standard error of the mean of per-task ``values``; None under two tasks."""
    if len(values) < 2:
        return None
    return float(np.std(np.asarray(values, dtype=float), ddof=1) / sqrt(len(values)))


def task_rates(per_task: Sequence[tuple[int, int]]) -> list[float]:
    """Per task, successes over attempts: the values the estimand averages.

    Raises:
        ValueError: a task has no attempt or more successes than attempts.
    """
    if any(t < 1 or not 0 <= s <= t for s, t in per_task):
        raise ValueError("each task needs >= 1 attempt and 0 <= successes <= attempts")
    return [s / t for s, t in per_task]


def over_tasks(per_task: Sequence[tuple[int, int]]) -> Interval:
    """Return the mean over tasks of per-task rates with the default interval (see module).

    Args:
        per_task: per task, (successes, scored attempts), attempts >= 1.

    Raises:
        ValueError: as :func:`task_rates`.
    """
    rates = task_rates(per_task)
    if not rates:
        return empty()
    n = len(rates)
    low, high = wilson_cc_bounds(sum(rates), n)
    return Interval(
        estimate=sum(rates) / n,
        low=low,
        high=high,
        se=cluster_se(rates),
        n=sum(t for _, t in per_task),
        tasks=n,
        method=WILSON_CC_TASKS,
    )


def cluster_t(per_task: Sequence[tuple[int, int]]) -> Interval:
    """The mean of per-task rates with a t-interval on its clustered standard error (Miller 2024).

    Collapses to a point when every task has the same rate, and is too liberal with few tasks near
    0 or 1 (``benchmarks/interval_coverage.py``); kept for comparison, not used by the report.
    """
    rates = task_rates(per_task)
    if len(rates) < 2:
        return empty("none (fewer than two tasks)")
    se = cluster_se(rates) or 0.0
    mean = sum(rates) / len(rates)
    half = float(student_t.ppf(1 - (1 - CONFIDENCE) / 2, len(rates) - 1)) * se
    return Interval(
        estimate=mean,
        low=max(mean - half, 0.0),
        high=min(mean + half, 1.0),
        se=se,
        n=sum(t for _, t in per_task),
        tasks=len(rates),
        method=CLUSTER_T,
    )


def cluster_bootstrap(per_task: Sequence[tuple[int, int]]) -> Interval:
    """The mean of per-task rates with a percentile bootstrap over tasks (fixed seed).

    Collapses to a point when every task has the same rate and is too liberal with few tasks
    (``benchmarks/interval_coverage.py``); kept for comparison, not used by the report.
    """
    rates = np.asarray(task_rates(per_task), dtype=float)
    if len(rates) == 0:
        return empty()
    picks = np.random.default_rng(SEED).integers(0, len(rates), size=(RESAMPLES, len(rates)))
    tail = (1 - CONFIDENCE) / 2 * 100
    low, high = np.percentile(rates[picks].mean(axis=1), [tail, 100 - tail])
    return Interval(
        estimate=float(rates.mean()),
        low=float(low),
        high=float(high),
        se=cluster_se(list(rates)),
        n=sum(t for _, t in per_task),
        tasks=len(rates),
        method=CLUSTER_BOOTSTRAP,
    )


def pass_at_k(n: int, c: int, k: int) -> float:
    """Return the unbiased estimate of pass@k: the chance that at least one of k samples passes.

    From M. Chen et al. (2021), "Evaluating Large Language Models Trained on Code"
    (arXiv:2107.03374), equation 1: pass@k = 1 - C(n - c, k) / C(n, k), for n samples of which c
    passed. Exact integer arithmetic, so no rounding for large n.

    Args:
        n: attempts on the task.
        c: accepted attempts, 0 <= c <= n.
        k: 1 <= k <= n.

    Raises:
        ValueError: the arguments are outside those ranges.
    """
    _check(n, c, k)
    return 1.0 - comb(n - c, k) / comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Return the unbiased estimate of pass^k: the chance that all of k samples pass.

    pass^k = C(c, k) / C(n, k), the estimator of S. Yao et al. (2024), "tau-bench"
    (arXiv:2406.12045), built as Chen et al. (2021) build pass@k: drawing k of the n attempts without
    replacement, the chance that every one drawn was accepted. Arguments and errors as
    :func:`pass_at_k`'s.
    """
    _check(n, c, k)
    return comb(c, k) / comb(n, k)


def _check(n: int, c: int, k: int) -> None:
    if not (0 <= c <= n and 1 <= k <= n):
        raise ValueError(f"need 0 <= c <= n and 1 <= k <= n, got n={n}, c={c}, k={k}")


def median(values: Sequence[float]) -> float:
    """Return the median of ``values`` (0.0 for none)."""
    return float(np.median(values)) if len(values) else 0.0
