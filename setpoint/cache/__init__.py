"""Reflectors, stores, indexers and shared informers: the read side of the runtime."""
