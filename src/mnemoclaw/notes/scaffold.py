"""``mnemoclaw init``: a workspace with the memory protocol, and a config file that finds it.

The command-line edge only prints what ``init_workspace`` reports. The one thing init
must never do silently is leave the config pointing at another workspace: the next
plain ``mnemoclaw index`` would then index that one. So the report says which
workspace plain commands will use, and ``set_default`` rewrites the config's
``workspace`` value in place (comments and layout kept).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from ..atomic import like_parent_dir, private_dir, write_atomic
from ..config import ENV_CONFIG, Settings, load_settings, set_workspace_value


@dataclass
class InitReport:
    workspace: Path
    config: Path
    created: list[str] = field(default_factory=list)
    # the workspace plain commands (no --workspace) will use, when it is not ``workspace``
    default_workspace: Path | None = None
    config_updated: bool = False


def _template(name: str) -> str:
    return resources.files("mnemoclaw.templates").joinpath(name).read_text("utf-8")


def init_workspace(*, workspace: str | os.PathLike[str] | None = None, state_dir: str | os.PathLike[str] | None = None,
                   config: str | os.PathLike[str] | None = None, agent_id: str | None = None,
                   set_default: bool = False) -> InitReport:
    """Create MEMORY.md, memory/ and AGENTS.md (with the memory protocol) and, if missing,
    the config file naming this workspace. Existing files are never changed, except the
    config's workspace value with ``set_default``."""
    config_file = config or os.environ.get(ENV_CONFIG)
    fresh = bool(config_file) and not Path(os.path.expanduser(str(config_file))).exists()
    # init is what creates a missing config file: start from the defaults
    settings: Settings = load_settings(workspace=workspace, state_dir=state_dir, config={} if fresh else config,
                                       agent_id=agent_id)
    settings.check_writable("init")
    ws = settings.workspace
    cfg = Path(os.path.expanduser(str(config_file))).absolute() if config_file else settings.config_path \
        or settings.state_dir / "config.json5"
    report = InitReport(ws, cfg)
    like_parent_dir(ws / "memory")  # private inside a private folder (the state directory's workspace)
    for name in ("AGENTS.md", "MEMORY.md"):
        target = ws / name
        if not target.exists():
            write_atomic(target, _template(name), private=False)
            report.created.append(str(target))
    if not cfg.exists():
        private_dir(cfg.parent)
        write_atomic(cfg, _template("config.json5").replace("__WORKSPACE__", str(ws).replace("\\", "/")))
        report.created.append(str(cfg))
        return report
    plain = load_settings(state_dir=state_dir, config=cfg, agent_id=agent_id).workspace
    if plain != ws:
        if set_default:
            set_workspace_value(cfg, plain, ws)
            report.config_updated = True
        else:
            report.default_workspace = plain
    return report
