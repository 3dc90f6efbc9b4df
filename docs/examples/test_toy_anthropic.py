"""The tutorial's test file: the conformance kit against toy_anthropic.parse."""

from toy_anthropic import parse

from pcfuzz.conform.pytest_plugin import pcfuzz_conformance

test_toy_parser = pcfuzz_conformance("anthropic-messages", parse)
