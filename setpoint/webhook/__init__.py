"""Admission and conversion webhook server (not built yet)."""
