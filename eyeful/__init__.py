"""eyeful: checks the problems claimed about a change by running code, before you push."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("eyeful")
except PackageNotFoundError:  # pragma: no cover - running from a source tree without install
    __version__ = "0.0.0"
