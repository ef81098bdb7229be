"""The custom resources of cnat, one module per group version and kind."""
