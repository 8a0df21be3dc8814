"""Memory lifecycles: decay and reinforcement, pending facts, validity, time, archive, forget, consolidate."""
