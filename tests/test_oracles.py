"""Specified quotes come from documentation, decided by an allow-list (issue 7 point 10)."""

from __future__ import annotations

import json

import pytest

from eyeful.grading import is_documentation
from tests.core import review
from tests.gitrepo import confirm, eyeful_config, git, make_repo, write

QUOTE = "add returns the sum of its arguments"
NOTEBOOK = json.dumps(
    {
        "cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                   "source": [f"# {QUOTE}\n", "add(1, 2)\n"]}],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5,
    }
)  # fmt: skip
# Each file holds the quote; only documentation may specify.
SOURCES = {
    "web/calc.mjs": (f"// {QUOTE}\nexport const add = (a, b) => a + b;\n", False),
    "web/Calc.vue": (f"<!-- {QUOTE} -->\n<template><p/></template>\n", False),
    "config/calc.yaml": (f"# {QUOTE}\nadd: true\n", False),
    "Makefile": (f"# {QUOTE}\nall:\n\ttrue\n", False),
    "notebooks/calc.ipynb": (NOTEBOOK, False),
    "calc.py": (f"# {QUOTE}\ndef add(a, b):\n    return a + b\n", False),
    "docs/guide.adoc": (f"= Guide\n\n{QUOTE}.\n", True),
    "docs/api.rst": (f"API\n===\n\n{QUOTE}.\n", True),
    "CHANGELOG": (f"1.0: {QUOTE}.\n", True),
    "man/calc.1": (f".TH CALC 1\n{QUOTE}.\n", True),
    "NOTES.txt": (f"{QUOTE}.\n", True),
}


def test_only_documentation_specifies(tmp_path):
    repo = make_repo(
        tmp_path / "repo",
        {"pyproject.toml": eyeful_config(), **{p: text for p, (text, _) in SOURCES.items()}},
    )
    confirm(repo)
    write(repo, {"calc.py": "def add(a, b):\n    return a - b\n"})
    git(repo, "add", "-A")
    findings = [
        {
            "id": f"q{n}", "expert": "correctness", "severity": "warning",
            "evidence": "analysis", "path": "calc.py", "line": 2, "title": f"from {path}",
            "body": "add subtracts", "oracle": {"kind": "specified", "quote": QUOTE,
                                                "source": path},
        }
        for n, path in enumerate(SOURCES)
    ]  # fmt: skip
    path = tmp_path / "findings.json"
    path.write_text(json.dumps(findings), encoding="utf-8")
    proc = review(repo, findings=path, format="json", level="read_only")
    assert proc.exit_code in (0, 1), proc.stderr
    graded = {f["title"][5:]: f["oracle"] for f in json.loads(proc.stdout)["findings"]}
    for source, (_, is_doc) in SOURCES.items():
        assert (graded[source]["graded"] == "specified") is is_doc, (source, graded[source])
        if not is_doc:
            assert "not documentation" in graded[source]["note"]


@pytest.mark.parametrize(
    ("path", "doc"),
    [
        ("README", True), ("README.md", True), ("docs/HISTORY.rst", True), ("AUTHORS", True),
        ("NEWS.txt", True), ("doc/tool.8", True), ("x.markdown", True),
        ("README.py", False), ("CMakeLists.txt", False), ("requirements-dev.txt", False),
        ("setup.cfg", False), ("Dockerfile", False), ("src/app.tsx", False),
        ("templates/page.html", False), ("build.gradle", False), ("go.mod", False),
    ],
)  # fmt: skip
def test_documentation_allow_list(path, doc):
    assert is_documentation(path) is doc
