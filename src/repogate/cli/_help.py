"""Help text a person reads: each argument named by its metavar, never by a Python type.

typer 0.29 prints an argument's Python annotation after its name in ``--help``
(``RUN_DIR <list[Path]>``); options are given a metavar and print none. :class:`PlainGroup` is the
group class of every typer application of the command line: each command it hands out shows its
arguments the way its options already are, by the metavar alone (``RUN_DIR...``).
:func:`plain_app` makes each of those applications with it.
"""

from __future__ import annotations

import select
import sys
from typing import IO, Any

import typer
from typer import _click  # typer vendors its own click: its Context and Command
from typer.core import TyperArgument, TyperGroup

__all__ = ["HELP_OPTIONS", "OutputClosed", "PlainGroup", "output_closed", "plain_app"]

HELP_OPTIONS = ("-h", "--help")
"""The options that print a command's help, on every command and group of the command line."""


class OutputClosed(Exception):
    """Standard output was closed by its reader (``repogate show RUN | head -1``).

    :class:`PlainGroup` raises it for the :class:`BrokenPipeError` a write met: typer turns every
    ``EPIPE`` into exit 1 (:attr:`~repogate.errors.ExitCode.NOT_ACCEPTED` to a script), and this,
    not an ``OSError``, passes typer to :func:`repogate.cli.main`, which exits quietly with
    :attr:`~repogate.errors.ExitCode.OUTPUT_CLOSED`.
    """


class _PlainArgument(TyperArgument):
    """An argument whose help line carries its metavar, and ``...`` when it takes several."""

    def display_type(self, ctx: _click.Context) -> str:
        """Return no type label: the metavar already says what to give."""
        return ""

    def display_type_rich(self, ctx: _click.Context) -> str | None:
        """Return no type label (the rich help's column), as :meth:`display_type`."""
        return None

    def _rich_display_name(self) -> str:
        return self.display_name_raw + ("..." if self.nargs != 1 else "")

    def _usage_display_name(self) -> str:
        """The usage line's name: ``RUN_DIR``, ``[N|ATTEMPT_ID]`` when optional, ``...`` when several.

        typer puts a required argument in braces (``{RUN_DIR}``), which no option or other
        argument has; a required one is written plainly, as click writes it.
        """
        name = self.display_name_raw if self.required else f"[{self.display_name_raw}]"
        return name + ("..." if self.nargs != 1 else "")


def output_closed(stream: IO[str] | None = None) -> bool:
    """Whether ``stream`` (standard output by default) is a pipe whose reader has closed it.

    Asked of the file descriptor with :func:`select.poll`: Linux reports ``POLLERR`` on the
    write end of a pipe with no reader (``POLLHUP`` on a socket). A stream with no file
    descriptor (a test's capture) cannot be asked and counts as closed, as the
    :class:`BrokenPipeError` it raised said.
    """
    try:
        fd = (stream or sys.stdout).fileno()
    except (OSError, ValueError):  # io.UnsupportedOperation is both
        return True
    poller = select.poll()
    poller.register(fd, select.POLLOUT)
    return any(events & (select.POLLERR | select.POLLHUP) for _, events in poller.poll(0))


class PlainGroup(TyperGroup):
    """A typer group whose commands name their arguments by metavar alone (see the module).

    A write to a closed standard output, while the command line is read (``--help``) or a
    command runs, is raised as :class:`OutputClosed`.
    """

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: _click.Context | None = None,
        **extra: Any,
    ) -> _click.Context:
        """Read the command line (printing ``--help`` when asked); a closed output: :class:`OutputClosed`."""
        try:
            return super().make_context(info_name, args, parent, **extra)
        except BrokenPipeError as exc:
            if output_closed():
                raise OutputClosed from exc
            raise

    def invoke(self, ctx: _click.Context) -> Any:
        """Run the command chosen; a write to a closed output raises :class:`OutputClosed`."""
        try:
            return super().invoke(ctx)
        except BrokenPipeError as exc:
            if output_closed():
                raise OutputClosed from exc
            raise  # another pipe's (a child process's): not hidden as a closed output

    def get_command(self, ctx: _click.Context, cmd_name: str) -> _click.Command | None:
        """Return the command ``cmd_name``, its arguments shown as :class:`_PlainArgument`."""
        command = super().get_command(ctx, cmd_name)
        for param in command.params if command is not None else ():
            if type(param) is TyperArgument:
                param.__class__ = _PlainArgument
        return command


def plain_app(name: str, help: str, **settings: Any) -> typer.Typer:
    """Return a typer application of the command line named ``name``, with ``help`` as its help.

    A :class:`PlainGroup`, help shown plainly (``--out PATH``, never ``<bool>`` or a name cut
    short), no completion commands, its help shown when called with nothing or with ``-h`` or
    ``--help`` (:data:`HELP_OPTIONS`, which its commands inherit); ``settings`` are further
    :class:`typer.Typer` arguments.
    """
    return typer.Typer(
        cls=PlainGroup,
        name=name,
        help=help,
        no_args_is_help=True,
        add_completion=False,
        rich_markup_mode=None,
        context_settings={"help_option_names": list(HELP_OPTIONS)},
        **settings,
    )
