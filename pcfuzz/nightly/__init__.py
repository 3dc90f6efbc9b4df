"""The nightly job: the pipeline and its budgets (:mod:`.pipeline`), the property
suite's pytest plugin (:mod:`.pytest_budget`), transition and line coverage
(:mod:`.transitions`), mutation testing (:mod:`.mutants`) and the report
(:mod:`.report`). It builds on :mod:`pcfuzz.engine`."""
