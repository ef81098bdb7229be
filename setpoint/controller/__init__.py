"""Work queue, controllers, builder, predicates, event recorder and finalizer helpers."""
