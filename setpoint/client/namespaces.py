"""The namespace a client uses when neither the kubeconfig context nor the pod names one."""

from __future__ import annotations

__all__ = ["DEFAULT_NAMESPACE"]

DEFAULT_NAMESPACE = "default"
