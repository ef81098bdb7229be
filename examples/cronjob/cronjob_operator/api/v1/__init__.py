"""batch.tutorial.kubebuilder.io/v1: the hub and storage version."""
