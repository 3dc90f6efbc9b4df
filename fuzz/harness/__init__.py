"""What the fuzz targets share: what they instrument (:mod:`.instrument`), input
splitting (:mod:`.fdp`), the byte-level wire target factory (:mod:`.wire_target`) and
the verdict on one capture (:mod:`.verdict`, also the code path of ``pcfuzz check``).
It imports only the contracts, the strategies and :mod:`pcfuzz.errors`, never the
tool."""

#: The environment variable naming where :mod:`.instrument` caches patched modules
#: (here, not there, so that the engine names it without importing atheris).
INSTRUMENT_CACHE_VARIABLE = "PCFUZZ_INSTRUMENT_CACHE"
