"""Retrieval evaluation on public data in the BEIR layout (never judged by an LLM)."""
