"""The report's statistics against reference values and brute force."""

from __future__ import annotations

from itertools import combinations

import pytest

from repogate.report import stats


def test_wilson_matches_the_reference_for_8_of_10() -> None:
    # R: prop.test(8, 10, correct = FALSE)$conf.int -> 0.4901625 0.9433178
    interval = stats.wilson(8, 10)
    assert interval.estimate == 0.8
    assert interval.low == pytest.approx(0.4901625, abs=1e-7)
    assert interval.high == pytest.approx(0.9433178, abs=1e-7)
    assert interval.method == stats.WILSON and interval.n == 10


def test_wilson_at_the_edges_and_bad_counts() -> None:
    # Wilson never collapses at 0 or n: 0/10 -> [0, 0.2775328] (R prop.test, no correction)
    assert stats.wilson(0, 10).high == pytest.approx(0.2775328, abs=1e-7)
    assert stats.wilson(10, 10).low == pytest.approx(1 - 0.2775328, abs=1e-7)
    assert stats.wilson(0, 0).n == 0
    with pytest.raises(ValueError, match="outside"):
        stats.wilson(11, 10)


def _brute(n: int, c: int, k: int) -> tuple[float, float]:
    """pass@k and pass^k by enumerating every k-subset of n attempts, c of them accepted."""
    outcomes = [True] * c + [False] * (n - c)
    subsets = list(combinations(outcomes, k))
    return (
        sum(any(s) for s in subsets) / len(subsets),
        sum(all(s) for s in subsets) / len(subsets),
    )


@pytest.mark.parametrize("n", range(1, 8))
def test_pass_at_k_and_pass_hat_k_equal_brute_force_enumeration(n: int) -> None:
    for c in range(n + 1):
        for k in range(1, n + 1):
            at, hat = _brute(n, c, k)
            assert stats.pass_at_k(n, c, k) == pytest.approx(at, abs=1e-12), (n, c, k)
            assert stats.pass_hat_k(n, c, k) == pytest.approx(hat, abs=1e-12), (n, c, k)


def test_pass_at_k_refuses_impossible_counts() -> None:
    with pytest.raises(ValueError):
        stats.pass_at_k(3, 4, 1)
    with pytest.raises(ValueError):
        stats.pass_hat_k(3, 1, 4)


def test_exact_mcnemar_is_the_binomial_test_of_discordant_pairs() -> None:
    # 1 vs 9 discordant pairs: p = 2 * P(X <= 1 | n=10, 1/2) = 2 * 11 / 1024
    assert stats.mcnemar_exact(1, 9) == pytest.approx(22 / 1024)
    assert stats.mcnemar_exact(5, 5) == pytest.approx(1.0)
    assert stats.mcnemar_exact(0, 0) == 1.0


def test_fisher_exact_reference() -> None:
    # R: fisher.test(matrix(c(3, 1, 1, 3), 2))$p.value -> 0.4857143
    assert stats.fisher_p(3, 4, 1, 4) == pytest.approx(0.4857143, abs=1e-7)
    assert stats.fisher_p(0, 0, 1, 4) == 1.0


def test_cluster_bootstrap_is_wider_than_treating_epochs_as_independent() -> None:
    """Epochs of one task are correlated: 10 tasks, each solved in all 5 epochs or none, carry
    the information of 10 observations, not 50; the interval must say so."""
    successes = [5] * 5 + [0] * 5
    trials = [5] * 10
    cluster = stats.cluster_bootstrap(successes, trials)
    naive = stats.wilson(25, 50)
    assert cluster.estimate == 0.5 and cluster.n == 50
    assert cluster.method == stats.CLUSTER_BOOTSTRAP
    assert cluster.high - cluster.low > (naive.high - naive.low) * 1.4
    assert 0.0 <= cluster.low < 0.5 < cluster.high <= 1.0
    assert stats.cluster_bootstrap(successes, trials) == cluster  # fixed seed: reproducible


def test_acceptance_picks_the_method_the_data_call_for() -> None:
    assert stats.acceptance([(1, 1), (0, 1), (1, 1)]).method == stats.WILSON
    assert stats.acceptance([(2, 2), (0, 2), (1, 2)]).method == stats.CLUSTER_BOOTSTRAP
    # every attempt agrees: a percentile bootstrap would collapse to a point; Wilson over tasks
    agreed = stats.acceptance([(2, 2), (2, 2), (2, 2)])
    assert agreed.method == stats.WILSON_TASKS
    assert agreed.low == pytest.approx(stats.wilson(3, 3).low) and agreed.high == 1.0


def test_paired_uses_mcnemar_for_one_epoch_and_bootstrap_for_several() -> None:
    a = [1.0] * 9 + [0.0]
    b = [0.0] * 9 + [1.0]
    one = stats.paired(a, b, one_epoch=True)
    assert (one.only_a, one.only_b) == (9, 1)
    assert one.p_value == pytest.approx(22 / 1024)
    assert one.difference.estimate == pytest.approx(0.8)
    assert one.method == stats.MCNEMAR
    several = stats.paired([0.5, 1.0, 1.0], [0.0, 0.5, 0.0], one_epoch=False)
    assert several.p_value is None and several.method == stats.PAIRED_BOOTSTRAP
    assert several.difference.estimate == pytest.approx(2 / 3)
    assert several.difference.low == pytest.approx(0.5)


def test_paired_difference_with_one_epoch_is_newcombes_interval() -> None:
    # Newcombe (1998) method 10 on Altman et al. (2000) table 6.2, [[14, 5], [0, 22]]: the
    # difference 5/41; interval from its formula (Wilson limits of 19/41 and 14/41, phi corrected)
    a = [1.0] * 14 + [1.0] * 5 + [0.0] * 22
    b = [1.0] * 14 + [0.0] * 5 + [0.0] * 22
    one = stats.paired(a, b, one_epoch=True)
    assert one.difference.estimate == pytest.approx(5 / 41)
    assert one.difference.low == pytest.approx(0.0114832, abs=1e-6)
    assert one.difference.high == pytest.approx(0.2264927, abs=1e-6)
    assert one.difference.method == stats.NEWCOMBE


def test_a_difference_every_task_shares_is_not_reported_as_certain() -> None:
    """Gold beats null on all 20 tasks: a bootstrap collapses to [-1, -1]; the data do not say that."""
    # one epoch: Newcombe; no concordant pair, phi = 0, so the upper limit is
    # -1 + sqrt(2) * (1 - Wilson lower limit of 20/20) = -1 + sqrt(2) * z^2 / (20 + z^2)
    z2 = 1.959963984540054**2
    one = stats.paired([0.0] * 20, [1.0] * 20, one_epoch=True)
    assert one.difference.low == -1.0
    assert one.difference.high == pytest.approx(-1 + 2**0.5 * z2 / (20 + z2), abs=1e-9)
    # two epochs, every task the same difference: the share of tasks like these is at least
    # Wilson's lower limit for 20/20; the other tasks could differ by anything in [-1, 1]
    several = stats.paired([0.0] * 20, [1.0] * 20, one_epoch=False)
    share = stats.wilson(20, 20).low
    assert several.difference.method == several.method == stats.PAIRED_AGREED
    assert (several.difference.low, several.difference.high) == pytest.approx(
        (-1.0, -1.0 + 2 * (1 - share))
    )
    tied = stats.paired([0.5] * 10, [0.5] * 10, one_epoch=False)
    tie = 1 - stats.wilson(10, 10).low
    assert (tied.difference.low, tied.difference.high) == pytest.approx((-tie, tie))


def test_an_interval_over_no_attempt_reads_as_none_not_as_zero() -> None:
    """A cohort an agent has no scored attempt in is not '0.0% [0.0%, 100.0%]' (0 accepted)."""
    from repogate.report.text import interval_text

    assert interval_text(stats.wilson(0, 0)) == "n/a (no observations)"
    assert interval_text(stats.wilson(8, 10)) == "80.0% [49.0%, 94.3%]"
