"""Hypothesis settings shared by the property tests of this package."""

from hypothesis import settings

# The CI machines share two cores between many test runs, so a slow example is not a failure:
# no per-example deadline. The default 100 examples keep the whole area well under a minute.
property_test = settings(deadline=None)
