"""The ``samplecontroller.k8s.io/v1alpha1`` API."""
