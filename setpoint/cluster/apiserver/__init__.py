"""A Kubernetes-compatible API server: HTTP API, storage, registry, watch, CRDs, validation."""
