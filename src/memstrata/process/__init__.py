"""Process memory: how an agent searched (tasks, step trees, hypotheses, dead ends, strategies), seed 003."""
