"""Process memory (``memory.tasks``): how an agent searched, not what a user said (seed 003, AlphaMemo).

Long exploratory tasks (debugging, data analysis, research) repeat actions already proven useless unless
the agent remembers how it worked. Process memory keeps that in the same store, scopes and interfaces as
every other memory.

**Model** (``memstrata.records.process``). A task (goal, context, constraints, type, status, outcome) has
steps in a tree: a step's parent is the step it followed from. A step records its action type (search, query, run, read,
hypothesize, summarize, ask_human, or any lowercase identifier), input, output, reasoning, the hypothesis
it tests, timestamps and cost (seconds, tokens), and utility tags: ``dead_end``, ``confidence``,
``generalisable`` and free ``tags``. Hypotheses are open, supported or refuted, with the steps that are
their evidence (refuting one makes the step that proposed it a dead end). Artifacts keep text or a file
reference. Strategies are mined from finished tasks. Everything carries scope columns: the store applies
the scope in every query, ``erase_user`` removes it, export, ``memstrata migrate`` and stats include it.

**Recording** (``writes.py``, ``recording.py``). Each call is one transaction: the record and its *index
unit* (a row of ``memories`` of kind ``process_*``, so the ordinary read path finds it). The unit is
embedded later (``indexing.py``): when the task finishes, or before the next read that compares vectors.
``with memory.tasks.start(goal) as task: with task.step("run", input=...) as step:`` records without
boilerplate; ``@task.tool(action)`` and ``@recorded(action)`` record tool calls. A step is committed when it
begins and again when it ends, so killing the agent loses nothing it began.

**Recall** (``recall.py``): hybrid search over goal, step and summary units, grouped by task; the path that
worked is a tree walk in SQL (``store.process.useful_paths``); ranking mixes relevance, confidence, cost and
recency with weights per task type (``[process.weights.<type>]``, see ``config.RecallWeights``).

**Dead ends** (``plan_check.py``, ``matching.py``): ``check_plan`` flags planned steps that match recorded
dead ends (same action type, similar input or intent), with the evidence; ``alternatives`` shows the
siblings that succeeded where a similar step failed.

**Strategies** (``mining.py``): action sequences per task type with success rates, counter-examples and
trigger conditions, re-mined whenever a task of the type finishes, found by type or by context.

**Compression** (``compress.py``, ``summary.py``): a finished task gets a summary unit (written by the
configured model when there is one and its answer passes the engine's checks, extractive otherwise) that
stands in for the chain's step units in recall; the chain is archived, restorable.
"""
