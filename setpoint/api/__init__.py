"""Objects and types shared by the runtime and the local cluster: pure data helpers, no I/O."""
