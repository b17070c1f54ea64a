"""Serving engines other than transformers, each importing its engine lazily (nothing yet)."""
