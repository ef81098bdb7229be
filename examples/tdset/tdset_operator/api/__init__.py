"""The custom resources of tdset, one module per group version and kind."""
