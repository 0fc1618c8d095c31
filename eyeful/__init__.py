"""eyeful: checks the problems claimed about a change by running code, before you push."""

# A literal, not importlib.metadata: that import alone costs ~35 ms on every hook run.
__version__ = "0.1.0"
