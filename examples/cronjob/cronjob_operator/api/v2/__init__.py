"""batch.tutorial.kubebuilder.io/v2: the schedule as a structured object."""
