"""Plain records shared by the store and the engine (graph entities and relations, process memory rows,
history events). They depend on nothing of ours but ``memstrata.types``, so ``storage`` can hold them
without importing the engine packages that produce them."""
