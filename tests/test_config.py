from __future__ import annotations

from pathlib import Path

import pytest

from eyeful.config import DEFAULT_SETUP_INPUTS, load_config
from eyeful.errors import EyefulError


def _load(tmp_path: Path, name: str, text: str):
    (tmp_path / name).write_text(text, encoding="utf-8")
    return load_config(tmp_path)


def test_reads_tool_eyeful_from_pyproject(tmp_path):
    config = _load(
        tmp_path,
        "pyproject.toml",
        """
[project]
name = "x"
[tool.eyeful]
timeout = 30
junit = "build/report.xml"
setup_inputs = ["requirements.txt"]
[tool.eyeful.commands]
setup = "pip install -r requirements.txt"
test = "pytest -q"
test_one = "pytest -q {test}"
""",
    )
    assert config.commands.setup == "pip install -r requirements.txt"
    assert config.commands.test == "pytest -q"
    assert config.commands.test_one == "pytest -q {test}"
    assert config.timeout == 30
    assert config.junit == "build/report.xml"
    assert config.setup_inputs == ("requirements.txt",)
    assert config.source == "pyproject.toml [tool.eyeful]"


def test_reads_top_level_of_eyeful_toml(tmp_path):
    config = _load(tmp_path, ".eyeful.toml", '[commands]\ntest = "go test ./..."\n')
    assert config.commands.test == "go test ./..."
    assert config.timeout == 600
    assert config.junit is None
    assert config.setup_inputs == DEFAULT_SETUP_INPUTS
    assert config.source == ".eyeful.toml"


def test_no_configuration_is_empty(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[project]\nname='x'\n")
    config = load_config(tmp_path)
    assert config.commands.items() == []


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[tool.eyeful]\ntimeot = 3\n", "pyproject.toml [tool.eyeful]: unknown key 'timeot'"),
        (
            "[tool.eyeful.commands]\ntests = 'x'\n",
            "pyproject.toml [tool.eyeful]: unknown key 'commands.tests'",
        ),
        (
            "[tool.eyeful]\ntimeout = 'soon'\n",
            "pyproject.toml [tool.eyeful]: timeout: Input should be a valid number",
        ),
        (
            '[tool.eyeful]\ntimeout = "10"\n',
            "pyproject.toml [tool.eyeful]: timeout: Input should be a valid number, not '10'",
        ),
        (
            "[tool.eyeful]\ntimeout = true\n",
            "pyproject.toml [tool.eyeful]: timeout: Input should be a valid number, not true/false",
        ),
        (
            "[tool.eyeful.agent]\npreset = 'codex'\nidle_timeout = false\n",
            "pyproject.toml [tool.eyeful]: agent.idle_timeout: Input should be a valid number",
        ),
        (
            "[tool.eyeful.agent]\npreset = 'codex'\nmax_file_chars = '900'\n",
            "pyproject.toml [tool.eyeful]: agent.max_file_chars: Input should be a valid integer",
        ),
        (
            "[tool.eyeful]\ntimeout = -1\n",
            "pyproject.toml [tool.eyeful]: timeout: Input should be greater than 0",
        ),
        (
            "[tool.eyeful.commands]\ntest_one = 'pytest -q'\n",
            "pyproject.toml [tool.eyeful]: commands.test_one: must contain {test}",
        ),
        (
            "[tool.eyeful.commands]\ntest = 5\n",
            "pyproject.toml [tool.eyeful]: commands.test: Input should be a valid string",
        ),
        (
            "[tool.eyeful]\njunit = '../out.xml'\n",
            "pyproject.toml [tool.eyeful]: junit: junit must be a path inside the repository",
        ),
        (
            "[tool.eyeful]\njunit = '/tmp/out.xml'\n",
            "pyproject.toml [tool.eyeful]: junit: junit must be a path inside the repository",
        ),
        (
            "[tool.eyeful]\nrepro_runs = 1\n",
            "pyproject.toml [tool.eyeful]: repro_runs: Input should be greater than or equal to 2",
        ),
        (  # a count the machine could never run is a mistake, not a wish: before anything runs
            "[tool.eyeful]\nrepro_runs = 1000000000\n",
            "pyproject.toml [tool.eyeful]: repro_runs: Input should be less than or equal to 100",
        ),
        (
            "[tool.eyeful]\nreruns = 9223372036854775807\n",
            "pyproject.toml [tool.eyeful]: reruns: Input should be less than or equal to 100",
        ),
        (
            "[tool.eyeful]\nrepro_runs = 2.5\n",
            "pyproject.toml [tool.eyeful]: repro_runs: Input should be a valid integer",
        ),
        (
            "[tool.eyeful]\nselect = 'changed'\n",
            "pyproject.toml [tool.eyeful]: select: Input should be 'all' or 'affected'",
        ),
        (
            "[tool.eyeful]\naffected_max_age = -1\n",
            "pyproject.toml [tool.eyeful]: affected_max_age: Input should be greater than or "
            "equal to 0",
        ),
        (
            "[tool.eyeful]\nisolate = 'docker'\n",
            "pyproject.toml [tool.eyeful]: isolate: Input should be 'venv' or 'none'",
        ),
        ("[tool.eyeful]\nsource = 'x'\n", "unknown key 'source'"),
        ("[tool.eyeful\n", "pyproject.toml: not valid TOML"),
        ("[tool]\neyeful = 3\n", "must be a table"),
    ],
)
def test_bad_configuration_is_one_line_naming_file_and_key(tmp_path, text, message):
    with pytest.raises(EyefulError) as err:
        _load(tmp_path, "pyproject.toml", text)
    assert message in str(err.value)
    assert str(err.value).startswith("pyproject.toml")
    assert "\n" not in str(err.value)


def test_both_files_is_an_error(tmp_path):
    (tmp_path / ".eyeful.toml").write_text('[commands]\ntest = "x"\n')
    with pytest.raises(EyefulError, match="keep one"):
        _load(tmp_path, "pyproject.toml", '[tool.eyeful.commands]\ntest = "y"\n')


@pytest.mark.parametrize(
    ("text", "isolate"),
    [
        ("[commands]\ntest = 'pytest'\n", "none"),  # nothing installs: the user's tools
        ("[commands]\nsetup = 'pip install -e .'\ntest = 'pytest'\n", "venv"),
        ("isolate = 'none'\n[commands]\nsetup = 'pip install -e .'\n", "none"),
        ("isolate = 'venv'\n[commands]\ntest = 'pytest'\n", "venv"),
    ],
)
def test_isolate_defaults_to_a_virtualenv_when_setup_installs_things(tmp_path, text, isolate):
    config = _load(tmp_path, ".eyeful.toml", text)
    assert config.effective_isolate == isolate
