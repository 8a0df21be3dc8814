"""One SQL store for every backend; each backend supplies only its :class:`~.dialect.Dialect`."""
