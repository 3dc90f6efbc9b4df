"""What the fuzz targets share: what they instrument (:mod:`.instrument`), input
splitting (:mod:`.fdp`), the byte-level wire target factory (:mod:`.wire_target`) and
the verdict on one capture (:mod:`.verdict`, also the code path of ``pcfuzz check``).
It imports only the contracts, the strategies and :mod:`pcfuzz.errors`, never the
tool."""
