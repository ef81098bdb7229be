"""pytest plugin and fixtures for testing operators against the local cluster."""
