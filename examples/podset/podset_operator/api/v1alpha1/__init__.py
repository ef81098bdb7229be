"""The ``app.example.com/v1alpha1`` API."""
