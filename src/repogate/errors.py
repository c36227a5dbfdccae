"""Errors raised by repogate.

The hierarchy, drawn once::

    RepogateError                  base of every error repogate raises on purpose
    ├── UserInputError             bad input from the user: the CLI prints one line and exits 2
    │   ├── ContractError          a contract file that is missing, malformed or invalid
    │   ├── EvidenceError          an evidence or review file that is missing or of the wrong schema
    │   ├── RunDirError            a run directory that does not exist or is not a repogate run
    │   ├── AgentSpecError         an ``--agent`` value that names no agent, or a bad predictions file
    │   ├── IsolationError         untrusted code would run without file-system isolation, not allowed
    │   └── SigningKeyError        a signing or public key that is missing, unreadable or not ed25519
    ├── ChangedEvidenceError       a run's stored evidence changed since the harness wrote it
    │                              (``show`` and ``report`` exit 3: the run, not the input, is wrong)
    ├── GitError                   a git command failed (command, exit code and stderr kept)
    ├── EnvironmentBuildError      an environment could not be built: the environment's fault, not the agent's
    ├── PatchApplyError            a patch does not apply to the state it was meant for
    ├── ModelError                 a model call failed (endpoint unreachable, refused, no completion):
    │                              the model-driven agent's failure (``agent_error``), never a crash
    ├── BudgetExceeded             a model-driven agent reached a budget of its contract
    │                              (``budget_exceeded``); caught in one place, the agent's loop
    └── ReportError                a test report is missing, too large or not JUnit XML
                                   (defined beside its parser, :mod:`repogate.oracles.junit`)

Expected outcomes (a failing test, a rejected patch, a command stopped at its time budget) are
values, never exceptions. Exceptions that come from libraries (``subprocess``, ``sqlite3``,
pydantic) are translated here once, at the edge.
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """Exit codes of the ``repogate`` command, one per outcome kind.

    ``OK`` every attempt ran (accepted or not) / the decision was accepted; ``NOT_ACCEPTED`` the
    decision was not accepted; ``USAGE`` bad input (:class:`UserInputError`, one line); ``INTERNAL``
    an attempt crashed or repogate failed; ``INTERRUPTED`` Ctrl-C (128 + SIGINT, as shells report it);
    ``OUTPUT_CLOSED`` standard output was closed by its reader before all was written
    (``repogate report RUN | head -1``): nothing more is printed, not even on standard error
    (128 + SIGPIPE, as shells report a program a closed pipe stopped, ``yes | head`` among them).
    """

    OK = 0
    NOT_ACCEPTED = 1
    USAGE = 2
    INTERNAL = 3
    INTERRUPTED = 130
    OUTPUT_CLOSED = 141


class RepogateError(Exception):
    """Base class of every error repogate raises on purpose."""


class UserInputError(RepogateError):
    """Input from the user is wrong; the message says what and how to fix it.

    Args:
        what: what went wrong, naming the bad value.
        fix: how to fix it, naming the valid choices where there are some.
    """

    def __init__(self, what: str, fix: str) -> None:
        super().__init__(f"{what}; {fix}")
        self.what = what
        self.fix = fix


class ContractError(UserInputError):
    """A contract file is missing, is not TOML, or does not validate."""


class EvidenceError(UserInputError):
    """An evidence or review file is missing, malformed or of an unknown schema version."""


class RunDirError(UserInputError):
    """A run directory does not exist, or holds no repogate store."""


class AgentSpecError(UserInputError):
    """An ``--agent`` spec names no known agent, or its input file is unusable."""


class IsolationError(UserInputError):
    """Bubblewrap is not usable here and weak isolation was not allowed: nothing untrusted runs."""


class SigningKeyError(UserInputError):
    """A signing key (``--sign-key``) or public key (``--key``) is missing, unreadable or not ed25519.

    The message names the file or environment variable, never the key's bytes.
    """


class ChangedEvidenceError(RepogateError):
    """A finished attempt's evidence changed since it was stored: its verdict is not trusted.

    A receipt, ``decision.json`` or a store row differs from what the harness wrote. ``show``
    and ``report`` exit 3 (:attr:`ExitCode.INTERNAL`) on it: the run, not the input, is wrong.

    Args:
        what: which run and attempts, and what changed.
        fix: what to do instead.
    """

    def __init__(self, what: str, fix: str) -> None:
        super().__init__(f"{what}; {fix}")
        self.what = what
        self.fix = fix


class GitError(RepogateError):
    """A git command failed.

    Args:
        args: the git command line as run.
        returncode: git's exit code.
        stderr: what git printed on standard error (kept whole, up to the sandbox's cap).
    """

    def __init__(self, args: list[str], returncode: int, stderr: str) -> None:
        cmd = " ".join(args)
        super().__init__(f"git failed ({returncode}): {cmd}: {stderr.strip()[:2000]}")
        self.args_ = list(args)
        self.returncode = returncode
        self.stderr = stderr


class EnvironmentBuildError(RepogateError):
    """The environment recipe could not be instantiated (install failed, interpreter missing).

    Args:
        message: one line: what failed and its cause.
        log: the failing command's whole output, to keep as a file (empty when there is none).
    """

    def __init__(self, message: str, log: str = "") -> None:
        super().__init__(message)
        self.log = log


class PatchApplyError(RepogateError):
    """A patch does not apply cleanly (no reverse apply, no fuzz) to the state it targets."""


class ModelError(RepogateError):
    """A model call failed: the endpoint is unreachable, refused the call, or sent no completion.

    Raised by :mod:`repogate.models` (the OpenAI client's exceptions are translated there, once);
    a model-driven agent ends with status ``agent_error`` and the message, never a harness crash.
    The message never holds the API key.
    """


class BudgetExceeded(RepogateError):
    """A model-driven agent reached one of its budgets (tokens, US dollars, wall time, samples).

    Args:
        which: the budget's name (``tokens``, ``cost_usd``, ``wall_time_s``, ``samples``).
        limit: its limit.
        spent: what was spent when it was noticed.
    """

    def __init__(self, which: str, limit: float, spent: float) -> None:
        super().__init__(f"{which} budget of {limit:g} reached (spent {spent:g})")
        self.which = which
        self.limit = limit
        self.spent = spent
