"""Revisioned key-value storage for the local API server (in-memory and SQLite backends)."""
