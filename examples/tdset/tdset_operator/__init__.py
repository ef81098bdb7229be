"""tdset: a Deployment whose replica count follows the time of day (the ``TDSet`` resource)."""
