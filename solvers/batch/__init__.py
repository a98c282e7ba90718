"""Batches of assignment problems: ``solve_batch`` (api.py) solves B problems in one call, on the CPU
cores or a GPU, and certifies every one.

Files: inputs.py (what is accepted, validation, packing), packing.py (the packed layout every
backend reads and writes: the contract), scan.py (the validating pass), cpu.py (the CPU backend),
device.py and device_kernels.py (the GPU backend), certify_batch.py (the independent certificate),
result.py (BatchResult), api.py (solve_batch and the backend table).
"""
