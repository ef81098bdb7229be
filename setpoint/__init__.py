"""setpoint: Kubernetes operators in Python.

The public API is re-exported here as the layers land; see ``docs/architecture.md``.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
