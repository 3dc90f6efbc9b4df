"""``pcfuzz bench``: the cases and their baselines (:mod:`.runner`), the benchmark
streams (:mod:`.data`), the wire floor pipelines and SDK paths (:mod:`.wire`), and
the instrumented ``json.loads`` target every fuzz target is compared with."""
