"""The documentation pages, shipped with the wheel as ``pcfuzz.docs`` (data only)."""
