"""namesake: measure and fix entity ambiguity in retrieval."""

__version__ = "0.1.0"
