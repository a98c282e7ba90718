"""`python -m solvers ...` is the `matchscope` command."""

from .cli import run

run()
