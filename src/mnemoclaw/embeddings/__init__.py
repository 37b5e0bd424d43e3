"""Embedding providers: one module each, one batch method, one registry."""

from .base import EmbeddingProvider, available_providers, create_provider, register_provider

__all__ = ["EmbeddingProvider", "available_providers", "create_provider", "register_provider"]
