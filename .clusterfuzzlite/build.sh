#!/bin/bash -eu
# Build every fuzz/fuzz_*.py target the OSS-Fuzz way (ClusterFuzzLite runs this in
# the Dockerfile's image; $SRC, $OUT and compile_python_fuzzer come from the image).
# Targets are discovered, so a new fuzz_<name>.py is fuzzed as soon as it lands.
#
# Beside each packaged fuzzer in $OUT:
#   fuzz_<name>_seed_corpus.zip   the committed seed corpus fuzz/corpus/fuzz_<name>/
#   fuzz_<name>.dict              libFuzzer dictionary
#   fuzz_<name>.options           [libfuzzer] options (dict, max_len, timeout)

# -eu here too, not only on the shebang line: the image runs `bash -eux build.sh`, but
# a build run any other way must also stop at the first failing step.
set -eu
cd "$SRC/pcfuzz"
# The harness extra pins hypothesis: structure-aware targets drive @given tests.
pip3 install ".[harness]"

for fuzzer in fuzz/fuzz_*.py; do
  name=$(basename "$fuzzer" .py)
  compile_python_fuzzer "$fuzzer"
  if [ -d "fuzz/corpus/$name" ] && [ -n "$(ls -A "fuzz/corpus/$name")" ]; then
    zip -q -j "$OUT/${name}_seed_corpus.zip" "fuzz/corpus/$name"/*
  fi
  if [ -f "fuzz/$name.dict" ]; then
    cp "fuzz/$name.dict" "$OUT/$name.dict"
  fi
  if [ -f "fuzz/$name.options" ]; then
    cp "fuzz/$name.options" "$OUT/$name.options"
  fi
done
