"""cnat.programming-kubernetes.info/v1alpha1."""
