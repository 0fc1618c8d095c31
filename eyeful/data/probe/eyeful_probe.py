"""The module pytest loads as eyeful's probe (``eyeful_probe`` in PYTEST_PLUGINS, ``-p``): it
hands pytest the probe itself, eyeful_probe_main. PYTEST_DONT_REWRITE

pytest's assertion rewriting reads and compiles the module a plugin is named by on every run
where it cannot keep the result (PYTHONDONTWRITEBYTECODE, a read-only installation), whatever
its docstring says: this one is a few lines, and the probe is imported as any module is, from
its compiled file.
"""

import sys

import eyeful_probe_main  # type: ignore[import-not-found]  # beside it

sys.modules[__name__] = eyeful_probe_main
