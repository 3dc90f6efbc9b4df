"""Compatibility module: the Chat Completions cache codec lives in
:mod:`contracts.openai_chat.cache`; this module only re-exports it."""

from .openai_chat import cache as _cache
from .openai_chat.cache import *  # noqa: F403

__all__ = _cache.__all__
