"""The fuzzing engine: target layout (:mod:`.targets`), the libFuzzer driver
(:mod:`.libfuzzer`), corpora (:mod:`.corpus`), crash replay and triage
(:mod:`.replay`, :mod:`.triage`), the regression stores (:mod:`.regressions`,
:mod:`.property_regressions`) and the readable view of one input (:mod:`.show`).
It never imports the nightly pipeline or the command line."""
