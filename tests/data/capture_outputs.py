"""Capture real pytest and `go test` output for tests/test_results.py.

The results parser must be tested on what the tools really print, not on what we
remember they print, so this script builds throwaway projects in a temp dir, runs
the real tools on them and saves the output under tests/data/outputs/.

Run it with the project's venv python (its pytest is the one captured):

    .venv/bin/python tests/data/capture_outputs.py

Needs `go` on PATH for the Go captures (no network: the module has no deps).
The only edit made to the output is replacing the random temp dir with a fixed
path, so that re-running the script gives small diffs.  Timings still vary.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

OUT = Path(__file__).resolve().parent / "outputs"
FIXED_ROOT = "/tmp/eyeful-capture"

PYTEST_FILES = {
    "pytest.ini": """\
        [pytest]
        """,
    "tests/test_a.py": """\
        import pytest


        @pytest.fixture
        def broken_fixture():
            raise RuntimeError("fixture exploded")


        @pytest.fixture
        def teardown_fails():
            yield
            raise RuntimeError("teardown exploded")


        def test_pass():
            assert True


        def test_fail():
            assert 1 + 1 == 3


        def test_uses_broken_fixture(broken_fixture):
            pass


        def test_pass_then_teardown_error(teardown_fails):
            pass


        def test_fail_then_teardown_error(teardown_fails):
            assert False


        @pytest.mark.skip(reason="not on this platform")
        def test_skipped():
            pass


        def test_skip_at_runtime():
            pytest.skip("decided at run time")


        @pytest.mark.xfail(reason="known bug")
        def test_xfail():
            assert False


        @pytest.mark.xfail(reason="maybe fixed")
        def test_xpass():
            pass


        @pytest.mark.xfail(reason="must fail", strict=True)
        def test_xpass_strict():
            pass


        @pytest.mark.parametrize("text", ["a b", "x - y", "ok", "café"])
        def test_param(text):
            assert text == "ok"


        @pytest.mark.parametrize("n", [1, 2, 3], ids=["one - first", "two words", "[3]"])
        def test_ids(n):
            assert n == 1


        def test_prints_fake_summary():
            print("FAILED tests/test_a.py::test_pass - not really")
            print("tests/test_a.py::test_pass FAILED [ 10%]")
            print("--- FAIL: TestNotReal (0.00s)")
            assert False, "printed fake result lines"


        class TestThing:
            def test_method_pass(self):
                pass

            def test_method_fail(self):
                assert [1, 2] == [1, 3]

            class TestNested:
                def test_deep(self):
                    assert False
        """,
    "tests/test_broken.py": """\
        import not_a_real_module_xyz  # noqa: F401


        def test_never_collected():
            pass
        """,
    "tests/test_ünïcödé.py": """\
        def test_unicode_pass():
            pass


        def test_unicode_fail():
            assert "ü" == "u"
        """,
    "tests/base_mixin.py": """\
        class Mixin:
            def test_from_mixin_pass(self):
                pass

            def test_from_mixin_fail(self):
                assert False
        """,
    "tests/test_inherit.py": """\
        from base_mixin import Mixin


        class TestInherited(Mixin):
            pass
        """,
}

GO_FILES = {
    "go.mod": """\
        module example.com/m

        go 1.19
        """,
    "calc/calc.go": """\
        package calc

        func Add(a, b int) int { return a + b }

        func Sub(a, b int) int { return a - b }
        """,
    "calc/calc_test.go": """\
        package calc

        import "testing"

        func TestAdd(t *testing.T) {
        \tif Add(1, 2) != 3 {
        \t\tt.Fatal("bad add")
        \t}
        }

        func TestSub(t *testing.T) {
        \tt.Run("positive numbers", func(t *testing.T) {
        \t\tif Sub(3, 1) != 2 {
        \t\t\tt.Fatal("bad")
        \t\t}
        \t})
        \tt.Run("negative numbers", func(t *testing.T) {
        \t\tif Sub(1, 3) != 2 {
        \t\t\tt.Errorf("Sub(1, 3) = %d, want 2", Sub(1, 3))
        \t\t}
        \t})
        }

        func TestTable(t *testing.T) {
        \tt.Run("group", func(t *testing.T) {
        \t\tt.Run("case/one", func(t *testing.T) {})
        \t})
        }

        func TestSkipped(t *testing.T) {
        \tt.Skip("needs network")
        }

        func TestShared(t *testing.T) {}
        """,
    "strutil/strutil.go": """\
        package strutil

        import "strings"

        func Upper(s string) string { return strings.ToLower(s) }
        """,
    "strutil/strutil_test.go": """\
        package strutil

        import (
        \t"fmt"
        \t"testing"
        )

        func TestUpper(t *testing.T) {
        \tif got := Upper("abc"); got != "ABC" {
        \t\tt.Errorf("Upper(abc) = %q", got)
        \t}
        }

        func TestPrintsFake(t *testing.T) {
        \tfmt.Println("--- FAIL: TestNotReal (0.00s)")
        }

        func TestShared(t *testing.T) {}
        """,
}

GO_BROKEN_FILES = {
    "go.mod": GO_FILES["go.mod"],
    "broken/broken.go": """\
        package broken

        func Oops() int { return "not an int" }
        """,
    "broken/broken_test.go": """\
        package broken

        import "testing"

        func TestOops(t *testing.T) { Oops() }
        """,
    "badtest/ok.go": """\
        package badtest

        func Fine() int { return 1 }
        """,
    "badtest/ok_test.go": """\
        package badtest

        import "testing"

        func TestFine(t *testing.T) { undefinedHelper(t) }
        """,
}


def write_tree(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")


def run(argv: list[str], cwd: Path, env: dict[str, str], tmp: Path) -> str:
    proc = subprocess.run(
        argv,
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        check=False,
    )
    return normalize(proc.stdout.decode("utf-8", errors="surrogateescape"), tmp)


def normalize(text: str, tmp: Path) -> str:
    text = text.replace(str(tmp), FIXED_ROOT)
    # pytest may cut a long path short ("/tmp/eyeful-capture-g8ht_h_..."): fix those too.
    return re.sub(re.escape(str(tmp.parent)) + r"/eyeful-capture-\w*", FIXED_ROOT, text)


def save(name: str, text: str) -> None:
    (OUT / name).write_text(text, encoding="utf-8", errors="surrogateescape", newline="")


def capture_pytest(tmp: Path) -> None:
    proj = tmp / "pyproj"
    write_tree(proj, PYTEST_FILES)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp),
        "LANG": "C.UTF-8",
        "COLUMNS": "100",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
    }
    base = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider"]
    cont = ["--continue-on-collection-errors"]
    # Shorter tracebacks where they are not the point keep the fixtures small.
    short = [*cont, "--tb=short"]
    runs = {
        # pytest's default: a collection error stops the run before any test.
        "pytest_q_interrupted.txt": ([*base, "-q"], {}),
        "pytest_q.txt": ([*base, "-q", *cont], {}),
        "pytest_v.txt": ([*base, "-v", *cont], {}),
        # -vv adds " <- tests/base_mixin.py" to inherited tests' lines.
        "pytest_vv.txt": ([*base, "-vv", *short], {}),
        # On CI (or with -vv) the summary keeps whole multi-line messages.
        "pytest_q_ci.txt": ([*base, "-q", *short], {"CI": "true"}),
        "pytest_rA.txt": ([*base, "-rA", *short], {}),
        "pytest_v_rA_color.txt": ([*base, "-v", "-rA", "--color=yes", *short], {}),
        "pytest_q_narrow.txt": ([*base, "-q", *short], {"COLUMNS": "40"}),
        "pytest_xdist_v.txt": ([*base, "-p", "xdist.plugin", "-n", "2", "-v", *short], {}),
    }
    for name, (argv, extra) in runs.items():
        save(name, run(argv, proj, {**env, **extra}, tmp))
    for family in ("xunit1", "xunit2"):
        xml = tmp / f"junit_{family}.xml"
        argv = [*base, "-q", *short, f"--junitxml={xml}", "-o", f"junit_family={family}"]
        run(argv, proj, env, tmp)
        save(f"pytest_junit_{family}.xml", normalize(xml.read_text(encoding="utf-8"), tmp))


def capture_go(tmp: Path) -> None:
    go = shutil.which("go")
    if go is None:
        sys.exit("go not found on PATH")
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp),
        "LANG": "C.UTF-8",
        "GOPATH": str(tmp / "gopath"),
        "GOCACHE": str(tmp / "gocache"),
        "GOFLAGS": "-mod=mod",
        "GOPROXY": "off",
        "GOTOOLCHAIN": "local",
        "GO111MODULE": "on",
        "CGO_ENABLED": "0",
    }
    mod = tmp / "gomod"
    write_tree(mod, GO_FILES)
    save("go_test.txt", run([go, "test", "./..."], mod, env, tmp))
    save("go_test_v.txt", run([go, "test", "-v", "./..."], mod, env, tmp))
    save("go_test_json.txt", run([go, "test", "-json", "./..."], mod, env, tmp))
    broken = tmp / "gobroken"
    write_tree(broken, GO_BROKEN_FILES)
    save("go_build_failed.txt", run([go, "test", "./..."], broken, env, tmp))
    save("go_build_failed_json.txt", run([go, "test", "-json", "./..."], broken, env, tmp))


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="eyeful-capture-") as name:
        tmp = Path(name).resolve()
        capture_pytest(tmp)
        capture_go(tmp)
        # Go marks its module cache read-only; make it removable.
        for path in tmp.rglob("*"):
            if not path.is_symlink():
                path.chmod(0o700 if path.is_dir() else 0o600)


if __name__ == "__main__":
    main()
