"""The ``mnemoclaw`` command group and what every command shares: the location options, one
progress renderer, JSON output, and library errors translated into one line.

Each command parses, makes one library call, and prints.

Data goes to stdout; progress and logs go to stderr. A ``MnemoclawError`` becomes one
line saying what is wrong and how to fix it; anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time
from typing import Any

import click

from .. import __version__
from ..errors import MnemoclawError


def json_text(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, indent=2)


def emit_json(data: Any, echo: Any = click.echo) -> None:
    echo(json_text(data))


def emit_json_line(data: Any) -> None:
    """One JSON object on one line (a stream of events a script reads line by line)."""
    click.echo(json.dumps(data, ensure_ascii=False))
    sys.stdout.flush()


class Progress:
    """A one-line progress bar on stderr, drawn only when stderr is a terminal."""

    def __init__(self, label: str, enabled: bool | None = None, unit: str = "files"):
        self.label = label
        self.unit = unit
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self._last = 0.0
        self._drawn = False

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled or total <= 0:
            return
        now = time.monotonic()
        if done < total and now - self._last < 0.1:
            return
        self._last = now
        width = 30
        filled = int(width * done / total)
        bar = "#" * filled + "." * (width - filled)
        sys.stderr.write(f"\r{self.label} [{bar}] {done}/{total} {self.unit}")
        sys.stderr.flush()
        self._drawn = True

    def finish(self) -> None:
        if self._drawn:
            sys.stderr.write("\n")
            sys.stderr.flush()


class Ctx:
    def __init__(self, workspace: str | None, state_dir: str | None, config: str | None, agent: str | None,
                 openclaw: str | None = None, cwd: str | None = None):
        self.cwd = cwd  # what relative paths are relative to (None: this process's working directory)
        self.workspace = workspace
        self.state_dir = state_dir
        self.config = config
        self.agent = agent
        self.openclaw = openclaw  # an OpenClaw state dir to serve read-only

    def settings(self, **overrides: Any):
        from ..config import load_settings, openclaw_settings

        if self.openclaw:
            return openclaw_settings(self.openclaw, state_dir=self.state_dir, agent_id=self.agent,
                                     workspace=self.workspace, overrides=overrides or None, cwd=self.cwd)
        return load_settings(workspace=self.workspace, state_dir=self.state_dir, config=self.config,
                             agent_id=self.agent, overrides=overrides or None, cwd=self.cwd)

    def locate(self, workspace_: str | None = None, state_dir_: str | None = None, config_: str | None = None,
               openclaw_: str | None = None) -> Ctx:
        """A command's own location options (given after it) put over the group's."""
        self.workspace = workspace_ or self.workspace
        self.state_dir = state_dir_ or self.state_dir
        self.config = config_ or self.config
        self.openclaw = openclaw_ or self.openclaw
        return self

    def memory(self, *, background: bool = False, settings: Any = None, **overrides: Any):
        """The memory of these settings (``settings``: already read)."""
        from ..api import Memory

        # a command's process ends with the command: no background writer unless it lives on;
        # its messages are read by the person at this machine: real paths, not the agent's scrubbed ones
        return Memory(settings or self.settings(**overrides), background=background)


def _os_error(exc: OSError) -> str:
    what = f" ({exc.filename})" if exc.filename and len(str(exc.filename)) <= 300 else ""
    return f"{exc.strerror or exc}{what}"


def translated(fn):
    """Per-command location options, and library errors as one clean line (exit 1).

    ``--workspace``, ``--state-dir`` and ``--config`` are accepted before the command
    (``mnemoclaw --workspace DIR index``) and after it (``mnemoclaw index --workspace DIR``).
    Tracebacks are kept for real bugs.
    """
    import functools

    @functools.wraps(fn)
    def wrapper(*args: Any, workspace_: str | None = None, state_dir_: str | None = None,
                config_: str | None = None, openclaw_: str | None = None, **kwargs: Any) -> Any:
        obj = click.get_current_context().find_object(Ctx)
        if obj is not None:
            obj.locate(workspace_, state_dir_, config_, openclaw_)
        try:
            return fn(*args, **kwargs)
        except BrokenPipeError:  # `mnemoclaw search … | head`: the reader stopped reading; nothing is wrong
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(1)
        except MnemoclawError as exc:
            raise click.ClickException(str(exc)) from None
        except OSError as exc:  # the machine said no (a path, a full disk, permissions): one line, no traceback
            raise click.ClickException(_os_error(exc)) from None

    wrapper = click.option("--openclaw", "openclaw_", is_flag=False, flag_value=DEFAULT_OPENCLAW, default=None,
                           metavar="[DIR]", help=OPENCLAW_HELP)(wrapper)
    for flags, name, metavar, what in ((("--config",), "config_", "FILE", "Config file"),
                                       (("--state-dir",), "state_dir_", "DIR", "State directory"),
                                       (("--workspace", "-w"), "workspace_", "DIR", "Workspace")):
        wrapper = click.option(*flags, name, metavar=metavar, help=f"{what} (same as the global option).")(wrapper)
    return wrapper


DEFAULT_OPENCLAW = "~/.openclaw"
OPENCLAW_HELP = ("Serve an OpenClaw agent's memory read-only: workspace and transcripts from OpenClaw's state "
                 "dir (default ~/.openclaw), mnemoclaw's own index. Same as --config DIR/openclaw.json.")


def _looks_like_dir(token: str) -> bool:
    return os.path.isdir(os.path.expanduser(token)) or token.startswith(("/", "~", ".")) or os.sep in token


def _openclaw_default(args: list[str]) -> list[str]:
    """``--openclaw`` takes an optional directory: ``mnemoclaw --openclaw status`` and
    ``mnemoclaw search --openclaw "a query"`` mean the default one, so a following
    token is its value only if it looks like a directory."""
    out: list[str] = []
    for i, token in enumerate(args):
        out.append(token)
        if token == "--openclaw":
            nxt = args[i + 1] if i + 1 < len(args) else None
            if nxt is not None and not nxt.startswith("-") and not _looks_like_dir(nxt):
                out.append(DEFAULT_OPENCLAW)
    return out


class _Group(click.Group):
    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        return super().parse_args(ctx, _openclaw_default(args))

    def read_command_line(self, argv: list[str]) -> tuple[click.Context, click.Context]:
        """``argv`` read as running it would read it, without running anything: the group's
        context and the command's (its ``info_name`` is the command's name). A usage error is
        raised as running it would raise it."""
        group = self.context_class(self, info_name="mnemoclaw", **self.context_settings)
        with group.scope(cleanup=False):
            # click.Command's parse, not click.Group's: that one keeps the command's name where only click reads it
            rest = click.Command.parse_args(self, group, _openclaw_default(list(argv)))
        if not rest:
            group.fail("Missing command.")
        name, command, args = self.resolve_command(group, rest)
        if name is None or command is None:
            group.fail(f"No such command {rest[0]!r}.")
        return group, command.make_context(name, args, parent=group)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="mnemoclaw")
@click.option("--workspace", "-w", metavar="DIR", help="Agent workspace (default: agents.defaults.workspace, "
              "else $MNEMOCLAW_WORKSPACE, else STATE_DIR/workspace).")
@click.option("--state-dir", metavar="DIR", envvar="MNEMOCLAW_STATE_DIR",
              help="State directory for the index and config (env MNEMOCLAW_STATE_DIR; default ~/.mnemoclaw).")
@click.option("--config", "config_path", metavar="FILE", envvar="MNEMOCLAW_CONFIG",
              help="JSON5 config file, or an OpenClaw openclaw.json (env MNEMOCLAW_CONFIG; "
                   "default STATE_DIR/config.json5).")
@click.option("--agent", metavar="ID", envvar="MNEMOCLAW_AGENT",
              help="Agent id from agents.entries or agents.list (default: the one marked default, else the first, "
                   "else main).")
@click.option("--openclaw", "openclaw_dir", is_flag=False, flag_value=DEFAULT_OPENCLAW, default=None, metavar="[DIR]",
              help=OPENCLAW_HELP)
@click.option("-v", "--verbose", count=True, help="More log output on stderr (-vv for debug).")
@click.pass_context
def cli(ctx: click.Context, workspace, state_dir, config_path, agent, openclaw_dir, verbose) -> None:
    """Long-term memory for AI agents: Markdown files, searched by keywords and meaning.

    Start with `mnemoclaw init`, write notes in MEMORY.md and memory/YYYY-MM-DD.md,
    then `mnemoclaw index` and `mnemoclaw search "..."`.
    """
    level = logging.WARNING - 10 * verbose
    logging.basicConfig(level=max(logging.DEBUG, level), stream=sys.stderr, format="mnemoclaw: %(message)s")
    if not verbose:  # psycopg and its pool log each connection a lost server breaks; the store's error says it once
        logging.getLogger("psycopg").setLevel(logging.ERROR)
    ctx.obj = Ctx(workspace, state_dir, config_path, agent, openclaw_dir)



