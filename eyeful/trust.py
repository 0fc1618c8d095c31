"""Which configurations the user confirmed, for which repository.

A record is SHA-256(repository path NUL digest). The digest covers everything that decides what
runs, where, and with which secret: the whole validated configuration (commands, `junit`,
`setup_inputs`, `timeout`, `level`, the agent with its `api_key_env`, `base_url` and experts, and
any key added later) except the keys listed in :data:`PRESENTATIONAL`, plus the prompt overrides
in `.eyeful/prompts/` (their content). Records live in the user's config directory (XDG), never in
the repository, so a configuration committed by someone else is never confirmed by the act of
cloning it.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING

from eyeful import focus
from eyeful.errors import EyefulError
from eyeful.userfiles import PROMPTS_DIR, config_home, prompt_overrides

if TYPE_CHECKING:
    from eyeful.config import Config

# Keys (dotted) that only change how the result is presented: changing them asks for no new
# confirmation. Every other key, including keys added later, is confirmed by construction.
PRESENTATIONAL: frozenset[str] = frozenset()


def _drop(data: dict[str, object], dotted: str) -> None:
    head, _, rest = dotted.partition(".")
    if not rest:
        data.pop(head, None)
    elif isinstance(inner := data.get(head), dict):
        _drop(inner, rest)


def confirmed_settings(config: Config) -> dict[str, object]:
    """The configuration as confirmed: the validated model, without presentational keys."""
    data = config.model_dump(mode="json")
    for dotted in PRESENTATIONAL:
        _drop(data, dotted)
    return data


def _flatten(data: dict[str, object], prefix: str = "") -> dict[str, object]:
    out: dict[str, object] = {}
    for key, value in data.items():
        if isinstance(value, dict):
            out.update(_flatten(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def _defaults() -> dict[str, object]:
    from eyeful.config import AgentConfig, Config

    agent = {name: field.default for name, field in AgentConfig.model_fields.items()}
    plain = {**Config(source="").model_dump(mode="json"), "agent": agent}
    normal: dict[str, object] = json.loads(json.dumps(_flatten(plain)))  # tuples as lists
    return normal


def shown_settings(config: Config, root: Path) -> list[tuple[str, str]]:
    """What a confirmation shows: every confirmed setting that is set and not a default, and
    the prompt overrides (name and content hash); commands first. Not escaped: callers escape."""
    defaults = _defaults()
    items: list[tuple[str, str]] = []
    for key, value in _flatten(confirmed_settings(config)).items():
        if value is None or (value == defaults.get(key) and not key.startswith("commands.")):
            continue
        text = value if isinstance(value, str) else json.dumps(value)
        items.append((key.removeprefix("commands."), text))
    commands = config.commands
    derived = focus.of(commands.test, commands.test_one)
    if derived is not None and derived.derived:
        # No test_one: the one eyeful derives from `test` is part of what `test` confirms.
        shown = derived.shown if derived.at_first_run else f"{derived.shown}  (derived from test)"
        items.append(("test_one", shown))
    elif (why := focus.why_not(commands.test, commands.test_one)) is not None and commands.test:
        items.append(("test_one", f"none: {why}; set commands.test_one so that a regression "
                                  "can block"))  # fmt: skip
    items.sort(key=lambda item: "." in item[0])  # commands, then the other settings
    for name, digest in prompt_overrides(root).items():
        about = digest if digest.startswith("not used") else f"sha256 {digest[:12]}"
        items.append((f"prompt {name}", f"{PROMPTS_DIR / name} ({about})"))
    return items


def commands_digest(config: Config, root: Path | None = None) -> str:
    """What is confirmed; any change to it asks again."""
    covered = {
        "config": confirmed_settings(config),
        "prompts": {} if root is None else prompt_overrides(root),
    }
    text = json.dumps(covered, sort_keys=True, ensure_ascii=True)
    return hashlib.sha256(text.encode()).hexdigest()


class TrustStore:
    """An append-only file of confirmation records."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or config_home() / "confirmed"

    def _record(self, root: Path, config: Config) -> str:
        key = str(root.resolve()).encode() + b"\0" + commands_digest(config, root).encode()
        return hashlib.sha256(key).hexdigest()

    def is_confirmed(self, root: Path, config: Config) -> bool:
        try:
            lines = self.path.read_text(encoding="ascii").split()
        except (FileNotFoundError, NotADirectoryError):
            return False
        return self._record(root, config) in lines

    def check_writable(self) -> None:
        """Fail now, before the commands are shown, when a confirmation could not be recorded."""
        existing = next(p for p in (self.path, *self.path.parents) if p.exists())
        if existing == self.path and self.path.is_file():
            return
        if existing != self.path and existing.is_dir():
            return
        raise EyefulError(
            f"cannot record confirmations in {self.path}: {existing} is not "
            f"{'a file' if existing == self.path else 'a directory'}; move it away "
            "(or set XDG_CONFIG_HOME)"
        )

    def confirm(self, root: Path, config: Config) -> None:
        if self.is_confirmed(root, config):
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="ascii") as handle:
                handle.write(self._record(root, config) + "\n")
        except OSError as err:
            raise EyefulError(
                f"cannot record the confirmation in {self.path}: {err.strerror}; "
                "make that path a writable file (or set XDG_CONFIG_HOME)"
            ) from None
