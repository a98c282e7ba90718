"""`python -m solvers ...` is the `matchscope` command."""
import sys

from .cli import main

sys.exit(main())
