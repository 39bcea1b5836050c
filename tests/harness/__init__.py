"""The hostile-input harness of the test suite (``tests/cli/test_hostile_inputs.py``) and of
``benchmarks/reliability.py``: malformed and hostile command lines and Python calls, the
workspace of small files they run in, and the checks of what a failure must look like."""
