"""The agent layer: proposes findings, reproductions and fixes; never decides a block."""
