"""The review as a SARIF 2.1.0 log (seed: VERIFICATION.md, "Findings as SARIF").

One run, one result per finding and one per blocking regression; the file validates against the
official OASIS schema (a copy is in ``eyeful/data``) and carries what GitHub code scanning needs
(non-empty rule texts, a location per finding, ``partialFingerprints``).

Choices:

- ``ruleId``: ``eyeful/finding/<expert>`` (the expert's name, characters outside ``[A-Za-z0-9._-]``
  made ``-``) for findings, ``eyeful/regression`` for tests the change breaks. Rules group results
  the way reviewers trust them, by who made the claim; the CWE goes to ``taxa`` (a ``CWE``
  taxonomy in the run), not into the rule.
- ``kind`` is the finding's (``fail``, ``review``, ``open``); ``level`` is the severity of a
  ``fail`` result and ``none`` otherwise (SARIF allows another level only with ``kind: fail``).
- ``fixes``: a unified diff becomes one ``replacement`` per hunk, with the hunk's leading and
  trailing context trimmed so that a hunk that only adds lines is an insertion. The deleted region
  is in the original file (SARIF §3.57): from column 1 of its first line to column 1 of the line
  after it, so whole lines go with their newline (§3.30.2); when the hunk does not show a next
  line, the end is one past the last deleted line's newline. An insertion is an empty region,
  ``startColumn == endColumn`` (§3.30.2 "insertion point"). ``insertedContent.text`` is absent for a
  pure deletion. Diff paths are read as ``git apply`` reads them (``-p1``, C-quoted names).
- ``partialFingerprints.primaryLocationLineHash``: a sha256 of the expert, the path and the
  normalised title (of the test id for a regression), 16 hex digits, then ``:N`` counting equal
  hashes in the run; no line number enters it, so it survives lines moving.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from eyeful import __version__
from eyeful.errors import EXIT_BLOCKING, EXIT_OK, EXIT_UNVERIFIED, EyefulError
from eyeful.findings import confined
from eyeful.grading import ReportedFinding
from eyeful.mdsafe import sarif_text
from eyeful.regressions import SUITE, TestFailure
from eyeful.report import Report, selection_phrase
from eyeful.textsafe import json_text

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
_URL_LABELS = ("repository", "source", "homepage", "documentation")
SRCROOT = "SRCROOT"
REGRESSION_RULE = "eyeful/regression"
CWE_TAXONOMY = "CWE"

_RULE_CHARS = re.compile(r"[^A-Za-z0-9._-]+")
_CWE = re.compile(r"^\s*(?:CWE)?[-_ :]*(\d+)\s*$", re.IGNORECASE)
_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_LABEL_DECORATIONS = re.compile(r"\(([^)]*)\)\s*$")
_C_ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}


# -- unified diffs -----------------------------------------------------------------------------


@dataclass
class _Line:
    op: str  # " ", "-" or "+"
    text: str  # without its newline
    newline: bool = True  # False when "\ No newline at end of file" follows


@dataclass
class _Hunk:
    old_start: int
    old_count: int
    lines: list[_Line] = field(default_factory=list)


@dataclass
class _FilePatch:
    path: str
    hunks: list[_Hunk] = field(default_factory=list)


def _c_unquote(text: str) -> str:
    """A name git quoted C-style (``"a/caf\\303\\251.py"``), up to its closing quote."""
    out = bytearray()
    i = 1
    while i < len(text) and text[i] != '"':
        char = text[i]
        if char == "\\" and i + 1 < len(text):
            octal = text[i + 1 : i + 4]
            if re.fullmatch(r"[0-7]{3}", octal):
                out.append(int(octal, 8) & 0xFF)
                i += 4
                continue
            if text[i + 1] in _C_ESCAPES:
                out.append(_C_ESCAPES[text[i + 1]])
                i += 2
                continue
        out += char.encode("utf-8")
        i += 1
    return out.decode("utf-8", errors="replace")


def _diff_path(header: str) -> str | None:
    """The path of a ``---``/``+++`` line's name as ``git apply -p1`` reads it; None for
    /dev/null."""
    name = header.rstrip("\r\n")
    name = _c_unquote(name) if name.startswith('"') else name.split("\t", 1)[0]
    if name == "/dev/null":
        return None
    parts = name.split("/", 1)
    return parts[1] if len(parts) == 2 and parts[1] else name


def parse_unified_diff(diff: str) -> list[_FilePatch]:
    """Files and hunks of a unified diff; lines outside hunks (git headers, prose) are skipped."""
    patches: list[_FilePatch] = []
    lines = diff.split("\n")  # not splitlines(): a "\r" or form feed is content
    i = 0
    current: _FilePatch | None = None
    while i < len(lines):
        line = lines[i]
        if line.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ "):
            old_path, new_path = _diff_path(line[4:]), _diff_path(lines[i + 1][4:])
            path = old_path if old_path is not None else new_path
            current = _FilePatch(path=path) if path is not None else None
            if current is not None:
                patches.append(current)
            i += 2
            continue
        match = _HUNK.match(line)
        if match is None or current is None:
            i += 1
            continue
        old_count = int(match.group(2) or "1")
        new_count = int(match.group(4) or "1")
        hunk = _Hunk(old_start=int(match.group(1)), old_count=old_count)
        i += 1
        old_left, new_left = old_count, new_count
        while i < len(lines) and (old_left > 0 or new_left > 0 or lines[i].startswith("\\")):
            text = lines[i]
            if text.startswith("\\"):
                if hunk.lines:
                    hunk.lines[-1].newline = False
            elif text.startswith("-") and old_left > 0:
                hunk.lines.append(_Line("-", text[1:]))
                old_left -= 1
            elif text.startswith("+") and new_left > 0:
                hunk.lines.append(_Line("+", text[1:]))
                new_left -= 1
            elif (text.startswith(" ") or text == "") and old_left > 0 and new_left > 0:
                hunk.lines.append(_Line(" ", text[1:]))
                old_left -= 1
                new_left -= 1
            else:
                break  # a malformed hunk: keep what was read
            i += 1
        current.hunks.append(hunk)
    return [p for p in patches if p.hunks]


def _past_end(line: _Line) -> int:
    """The column one past the end of ``line``, its newline included."""
    return len(line.text) + (2 if line.newline else 1)


def _replacement(hunk: _Hunk) -> dict[str, Any] | None:
    """One SARIF replacement for the hunk's changed lines; None when it changes nothing."""
    ops = hunk.lines
    changed = [n for n, line in enumerate(ops) if line.op != " "]
    if not changed:
        return None
    first, last = changed[0], changed[-1]
    before, after = ops[:first], ops[last + 1 :]
    start = (hunk.old_start if hunk.old_count else hunk.old_start + 1) + len(before)
    block = ops[first : last + 1]
    deleted = [line for line in block if line.op != "+"]
    inserted = [line for line in block if line.op != "-"]
    region: dict[str, Any]
    if not deleted:
        if after or not before:
            region = {"startLine": start, "startColumn": 1, "endLine": start, "endColumn": 1}
        else:  # at the end of the file: after the last line's newline
            column = _past_end(before[-1])
            region = {
                "startLine": start - 1, "startColumn": column,
                "endLine": start - 1, "endColumn": column,
            }  # fmt: skip
    else:
        end = start + len(deleted) - 1
        region = {"startLine": start, "startColumn": 1}
        if after:
            region |= {"endLine": end + 1, "endColumn": 1}
        else:
            region |= {"endLine": end, "endColumn": _past_end(deleted[-1])}
    out: dict[str, Any] = {"deletedRegion": region}
    if inserted:
        text = "".join(line.text + ("\n" if line.newline else "") for line in inserted)
        out["insertedContent"] = {"text": text}
    return out


def fix_changes(diff: str) -> list[dict[str, Any]]:
    """SARIF ``artifactChange`` objects for a unified diff (empty when it has no hunks)."""
    changes: list[dict[str, Any]] = []
    for patch in parse_unified_diff(diff):
        replacements = [r for r in map(_replacement, patch.hunks) if r is not None]
        if replacements:
            changes.append(
                {"artifactLocation": _artifact(patch.path), "replacements": replacements}
            )
    return changes


# -- pieces --------------------------------------------------------------------------------------


def _uri(path: str) -> str:
    return quote(path.replace("\\", "/"), safe="/")


def _artifact(path: str) -> dict[str, Any]:
    return {"uri": _uri(path), "uriBaseId": SRCROOT}


def expert_rule_id(expert: str) -> str:
    slug = _RULE_CHARS.sub("-", expert.strip()).strip("-") or "expert"
    return f"eyeful/finding/{slug}"


def cwe_id(cwe: str | None) -> str | None:
    """``"CWE-79"``, ``"cwe 79"`` or ``"79"`` as the taxon id ``"79"``; None when not a CWE
    number."""
    if cwe is None:
        return None
    match = _CWE.match(cwe)
    return str(int(match.group(1))) if match else None


def decorations(label: str) -> list[str]:
    """The decorations of a conventional-comments label: ``issue (blocking)`` → ``["blocking"]``."""
    match = _LABEL_DECORATIONS.search(label)
    if match is None:
        return []
    return [d.strip() for d in match.group(1).split(",") if d.strip()]


def _fingerprint(*parts: str) -> str:
    norm = "\0".join(" ".join(p.split()).casefold() for p in parts)
    return hashlib.sha256(norm.encode("utf-8")).hexdigest()[:16]


def _message(title: str, body: str) -> str:
    """Title (one line) and body, as SARIF plain text: no placeholder, link or hidden text."""
    title, body = " ".join(title.split()), body.strip()
    return sarif_text(f"{title}\n\n{body}" if body else title)


def _regression_path(test: str) -> str | None:
    """The test file of a pytest id (``path::name``), when it is a usable repository path."""
    if test == SUITE or "::" not in test:
        return None
    path = test.split("::", 1)[0]
    try:
        return confined(path)
    except ValueError:
        return None


class _Rules:
    def __init__(self) -> None:
        self.rules: list[dict[str, Any]] = []
        self.index: dict[str, int] = {}
        self.experts: dict[str, list[str]] = {}

    def regression(self) -> int:
        if REGRESSION_RULE not in self.index:
            self._add(
                {
                    "id": REGRESSION_RULE,
                    "shortDescription": {
                        "text": "A test fails on the change and passes on the base"
                    },
                    "fullDescription": {
                        "text": "A test already in the repository passed on the base and fails "
                        "on the change: the change broke it. Its oracle is derived (the "
                        "repository's own test), so the result blocks."
                    },
                    "help": {
                        "text": "Run the test named in the message on the change and find what "
                        "the change broke; if the new behaviour is intended, change the test "
                        "in the same change."
                    },
                    "defaultConfiguration": {"level": "error"},
                    "properties": {"tags": ["eyeful", "regression"]},
                }
            )
        return self.index[REGRESSION_RULE]

    def expert(self, expert: str) -> int:
        rule_id = expert_rule_id(expert)
        names = self.experts.setdefault(rule_id, [])
        if expert not in names:
            names.append(expert)
        who = ", ".join(names)
        rule = {
            "id": rule_id,
            "shortDescription": {"text": f"A problem in the change reported by the expert {who}"},
            "fullDescription": {
                "text": f"A problem in the change that the expert {who} claimed and eyeful "
                "checked. A result of kind fail was shown by a reproduction test that fails on "
                "the change and passes on the base, with an oracle that is not the expert's own "
                "reading; kind review is a question eyeful could not verify; kind open is "
                "disputed."
            },
            "help": {
                "text": "Read the message and the evidence in the result's properties (gates, "
                "oracle, repro). For a fail result, run the reproduction test and apply the "
                "suggested fix when it is verified; answer a review result before merging."
            },
            "properties": {"tags": ["eyeful", "finding"]},
        }
        if rule_id in self.index:
            self.rules[self.index[rule_id]] = rule
        else:
            self._add(rule)
        return self.index[rule_id]

    def _add(self, rule: dict[str, Any]) -> None:
        self.index[rule["id"]] = len(self.rules)
        self.rules.append(rule)


class _Taxa:
    def __init__(self) -> None:
        self.ids: list[str] = []

    def ref(self, taxon: str) -> dict[str, Any]:
        if taxon not in self.ids:
            self.ids.append(taxon)
        return {
            "id": taxon,
            "index": self.ids.index(taxon),
            "toolComponent": {"name": CWE_TAXONOMY, "index": 0},
        }

    def taxonomy(self) -> dict[str, Any]:
        return {
            "name": CWE_TAXONOMY,
            "organization": "MITRE",
            "shortDescription": {"text": "The MITRE Common Weakness Enumeration"},
            "informationUri": "https://cwe.mitre.org/",
            "isComprehensive": False,
            "taxa": [
                {
                    "id": taxon,
                    "helpUri": f"https://cwe.mitre.org/data/definitions/{taxon}.html",
                }
                for taxon in self.ids
            ],
        }


class _Fingerprints:
    def __init__(self) -> None:
        self.seen: dict[str, int] = {}

    def __call__(self, *parts: str) -> dict[str, str]:
        digest = _fingerprint(*parts)
        self.seen[digest] = self.seen.get(digest, 0) + 1
        return {"primaryLocationLineHash": f"{digest}:{self.seen[digest]}"}


def _fix(finding: ReportedFinding) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    if finding.fix is None:
        return [], None
    if finding.fix_verified:
        state = "verified: the reproduction passes with it and no test that passed fails"
    elif finding.fix_note:
        state = f"not verified: {finding.fix_note}"
    else:
        state = "not verified"
    info = {"verified": finding.fix_verified, "note": finding.fix_note, "diff": finding.fix.diff}
    changes = fix_changes(finding.fix.diff)
    if not changes:
        return [], info
    return [{"description": {"text": f"Suggested fix ({state})"}, "artifactChanges": changes}], info


def _finding_result(
    finding: ReportedFinding, rules: _Rules, taxa: _Taxa, fingerprint: _Fingerprints
) -> dict[str, Any]:
    rule_index = rules.expert(finding.expert)
    region: dict[str, Any] = {
        "startLine": finding.line,
        "endLine": finding.end_line or finding.line,
    }
    result: dict[str, Any] = {
        "ruleId": rules.rules[rule_index]["id"],
        "ruleIndex": rule_index,
        "kind": finding.kind,
        "level": finding.severity if finding.kind == "fail" else "none",
        "message": {"text": _message(finding.title, finding.body)},
        "locations": [
            {"physicalLocation": {"artifactLocation": _artifact(finding.path), "region": region}}
        ],
        "partialFingerprints": fingerprint(finding.expert, finding.path, finding.title),
    }
    if finding.baseline_state is not None:
        result["baselineState"] = finding.baseline_state
    taxon = cwe_id(finding.cwe)
    if taxon is not None:
        result["taxa"] = [taxa.ref(taxon)]
    repro = finding.repro
    if repro is not None:
        what = f"reproduction: `{repro.test or repro.path}` fails with “{repro.fails}”"
        if repro.code is not None:
            what += (
                " (a new test given with the finding, not in the repository: see properties.repro)"
            )
        result["relatedLocations"] = [
            {
                "id": 1,
                "physicalLocation": {"artifactLocation": _artifact(repro.path)},
                "message": {"text": sarif_text(what)},
            }
        ]
    fixes, fix_info = _fix(finding)
    if fixes:
        result["fixes"] = fixes
    result["properties"] = {
        "id": finding.id,
        "expert": finding.expert,
        "severity": finding.severity,
        "evidence": finding.evidence,
        "oracle": finding.oracle.model_dump(mode="json"),
        "label": finding.label,
        "decorations": decorations(finding.label),
        "corroboratedBy": list(finding.corroborated_by),
        "repro": repro.model_dump(mode="json") if repro is not None else None,
        "objection": finding.objection,
        "judge": finding.judge,
        "merged": list(finding.merged),
        "gates": [gate.model_dump(mode="json") for gate in finding.gates],
        "unverified": finding.unverified,
        "cwe": finding.cwe,
        "fix": fix_info,
    }
    return result


def _regression_result(
    failure: TestFailure, rules: _Rules, fingerprint: _Fingerprints
) -> dict[str, Any]:
    rule_index = rules.regression()
    if failure.test == SUITE:
        text = "The test suite fails on the change and passes on the base"
    elif failure.kind == "new_test":
        text = f"`{failure.test}` is new in the change and fails (block_new_failures)"
    else:
        text = f"`{failure.test}` fails on the change and passes on the base"
    result: dict[str, Any] = {
        "ruleId": REGRESSION_RULE,
        "ruleIndex": rule_index,
        "kind": "fail",
        "level": "error",
        "baselineState": "new",
        "message": {"text": _message(text, failure.excerpt)},
    }
    path = _regression_path(failure.test)
    if path is not None:
        location: dict[str, Any] = {"artifactLocation": _artifact(path)}
        if failure.line is not None:
            location["region"] = {"startLine": failure.line}
        result["locations"] = [{"physicalLocation": location}]
    result["partialFingerprints"] = fingerprint("regression", failure.test)
    result["properties"] = {
        "test": failure.test,
        "label": "issue (blocking)",
        "decorations": ["blocking"],
        "oracle": failure.oracle,
        "onChange": failure.on_change,
        "onBase": failure.on_base,
        "confirmation": failure.confirmation,
        "excerpt": failure.excerpt,
    }
    return result


def _invocation(report: Report) -> dict[str, Any]:
    invocation: dict[str, Any] = {
        # eyeful ran to the end: it found blocking problems (1) or could not verify some (3).
        "executionSuccessful": report.exit_code in (EXIT_OK, EXIT_BLOCKING, EXIT_UNVERIFIED),
        "exitCode": report.exit_code,
        "exitCodeDescription": report.outcome,
    }
    notes = [
        {
            "message": {"text": sarif_text(u.text)},
            "level": "warning" if u.unverified else "note",
            "properties": {"unverified": u.unverified},
        }
        for u in report.uncertainty
        if u.text.strip()
    ]
    if notes:
        invocation["toolExecutionNotifications"] = notes
    return invocation


def _root_uri(root: Path) -> str:
    uri = root.absolute().as_uri()
    return uri if uri.endswith("/") else uri + "/"


def information_uri() -> str | None:
    """Where eyeful lives, as its installed metadata says (``[project.urls]`` in pyproject.toml:
    Repository, Source, Homepage or Documentation); None when it names none, so that the log
    points at no page that does not exist (eyeful is not on PyPI; the property is optional)."""
    from importlib import metadata

    try:
        entries = metadata.metadata("eyeful").get_all("Project-URL") or []
    except metadata.PackageNotFoundError:
        return None
    urls = {}
    for entry in entries:
        label, _, url = entry.partition(",")
        urls[label.strip().casefold()] = url.strip()
    return next((urls[k] for k in _URL_LABELS if urls.get(k, "").startswith("https://")), None)


def to_sarif(report: Report, root: Path | None = None) -> dict[str, Any]:
    """The report as a SARIF 2.1.0 log with one run."""
    rules, taxa, fingerprint = _Rules(), _Taxa(), _Fingerprints()
    results = [_regression_result(f, rules, fingerprint) for f in report.regressions if f.blocking]
    results += [_finding_result(f, rules, taxa, fingerprint) for f in report.findings]
    driver: dict[str, Any] = {
        "name": "eyeful",
        "version": __version__,
        "rules": rules.rules,
    }
    uri = information_uri()
    if uri is not None:
        driver["informationUri"] = uri
    srcroot: dict[str, Any] = {"description": {"text": "The root of the repository reviewed."}}
    if root is not None:
        srcroot["uri"] = _root_uri(root)
    run: dict[str, Any] = {
        "tool": {"driver": driver},
        "automationDetails": {"id": f"eyeful/{report.head.short}"},
        "invocations": [_invocation(report)],
        "originalUriBaseIds": {SRCROOT: srcroot},
        "columnKind": "unicodeCodePoints",
        "results": results,
        "properties": {
            "base": report.base.model_dump(mode="json"),
            "head": report.head.model_dump(mode="json"),
            "outcome": report.outcome,
            "blocking": report.blocking,
            "questions": report.questions,
            "disputed": report.disputed,
        },
    }
    if report.selection is not None:  # select = "affected": which tests ran on the change
        run["properties"]["selection"] = report.selection.model_dump(mode="json")
        run["properties"]["selected"] = selection_phrase(report)
    if taxa.ids:
        driver["supportedTaxonomies"] = [{"name": CWE_TAXONOMY, "index": 0}]
        run["taxonomies"] = [taxa.taxonomy()]
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}


def write_sarif(report: Report, path: Path, root: Path | None = None) -> None:
    """Write the SARIF log to ``path`` atomically (a temporary file beside it, then a rename)."""
    text = json_text(json.dumps(to_sarif(report, root), indent=2, ensure_ascii=False)) + "\n"
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    try:
        with tmp.open("x", encoding="utf-8", newline="\n") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        # Checked before anything ran (eyeful/cli/preflight.py), and again now: the rename
        # replaces only a regular file, never a symlink, a FIFO or a device put there since.
        try:
            mode = os.lstat(path).st_mode
        except FileNotFoundError:
            mode = stat.S_IFREG
        if not stat.S_ISREG(mode):
            tmp.unlink(missing_ok=True)
            raise EyefulError(f"{path}: cannot write SARIF: it is no longer a regular file")
        tmp.replace(path)
    except OSError as err:
        tmp.unlink(missing_ok=True)
        raise EyefulError(f"{path}: cannot write SARIF: {err.strerror or err}") from None
