"""The local Kubernetes control plane (server side). Never imports the runtime."""
