"""The parts of the Memory facade: the core that owns state, scope binding, and the sub-APIs
(``memory.jobs``, ``memory.lifecycle``, ``memory.sessions``, ``memory.admin``) built around it."""
