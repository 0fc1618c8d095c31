"""Every example in the README works as written: its TOML configures eyeful, its findings file
loads, its commands and options exist, its pre-commit hook id is eyeful's. (The demo's output
block is compared with a real `eyeful demo` in tests/test_verify.py.)"""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

import pytest

from eyeful.cli.app import main
from eyeful.config import parse_config
from eyeful.findings import load_findings

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def blocks(lang: str) -> list[str]:
    """The bodies of the README's ```lang blocks (not the four-backtick demo output)."""
    return re.findall(rf"^```{lang}\n(.*?)^```$", README, flags=re.S | re.M)


def _eyeful_commands() -> list[list[str]]:
    """Every eyeful invocation in the README's shell blocks, as argv after the program name."""
    out = []
    for block in blocks("sh"):
        for line in block.replace("\\\n", " ").splitlines():
            line = line.split(" #")[0]
            for part in line.split("&&"):
                words = shlex.split(part)
                for i, word in enumerate(words):
                    if word.endswith("eyeful") and not word.endswith("/eyeful/"):
                        args = words[i + 1 :]
                        if words[i - 1 : i] == ["git"] or word != "eyeful" or i == 0:
                            out.append(args)
                        break
    return out


def test_every_toml_example_is_a_valid_configuration():
    found = [tomllib.loads(text) for text in blocks("toml")]  # every block is valid TOML
    configs = [data for data in found if "tool" in data]  # the others are eval's case.toml
    assert len(configs) >= 3
    for data in configs:
        table = data["tool"]["eyeful"]
        config = parse_config(table, "README")
        assert config.model_dump()  # validated, not just parsed


def test_the_findings_example_loads(tmp_path):
    [text] = blocks("json")
    path = tmp_path / "findings.json"
    path.write_text(f"[{text}]", encoding="utf-8")
    [finding] = load_findings([path])
    assert finding.id == "boundary" and finding.repro is not None and finding.fix is not None
    path.write_text(" ".join(text.split()) + "\n", encoding="utf-8")  # as JSON lines
    assert [f.id for f in load_findings([path])] == ["boundary"]


def test_the_pre_commit_snippet_names_eyefuls_hook():
    [snippet] = [b for b in blocks("yaml") if "hooks:" in b]
    ids = set(re.findall(r"- id: (\S+)", snippet))
    declared = set(re.findall(r"^- id: (\S+)", (ROOT / ".pre-commit-hooks.yaml").read_text(), re.M))
    assert ids and ids <= declared


@pytest.mark.parametrize("argv", _eyeful_commands(), ids=" ".join)
def test_every_eyeful_command_in_the_readme_exists(argv, capsys):
    assert main([*argv, "-h"]) == 0, capsys.readouterr()


def test_every_option_and_command_the_readme_lists_exists(capsys):
    assert main(["-h"]) == 0
    help_text = capsys.readouterr().out
    table = README.split("| option | meaning |")[1].split("\n\n")[0]
    options = re.findall(r"^\| `(-[^`]*)`", table, flags=re.M)
    options += re.findall(r"^\| `[^`]*`, `(-[^`]*)`", table, flags=re.M)
    assert len(options) >= 10
    for option in options:
        assert option.split()[0] in help_text, option
    commands = README.split("Commands: ")[1].split("\n\n")[0]
    for usage in re.findall(r"`(?:git )?eyeful ([^`]*)`", commands):
        words = [w for w in usage.replace("[", " ").replace("]", " ").split()]
        assert main([*words, "-h"]) == 0, usage
