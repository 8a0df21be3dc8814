"""Graph memory: typed entities and temporal relations in the same store as memories."""
