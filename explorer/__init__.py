"""matchscope explorer: a PySide6 desktop app that watches matching, assignment and max-flow solvers run.

It talks to the solvers only through the public API (solvers.load/save/generate/solve/track, the
registry's Algorithm/Option declarations) and the telemetry stream (solvers.telemetry).
"""
