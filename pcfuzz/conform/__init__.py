"""Testing other parsers: the conformance kit's runner (:mod:`.kit`), its pytest
helper (:mod:`.pytest_plugin`), this project's parsers and the official SDK
accumulators as adapters (:mod:`.adapters`, :mod:`.oracles`), and the SDK drift
report (:mod:`.drift`)."""
