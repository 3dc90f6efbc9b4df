"""The fuzz project as libFuzzer and ClusterFuzzLite see it: the ``fuzz_*.py``
targets with their ``.dict``, ``.options`` and ``corpus/``, and ``harness/`` (what the
targets share). The ``pcfuzz`` command that runs them lives in ``pcfuzz.cli``."""
