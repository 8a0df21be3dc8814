"""A task with its step tree, hypotheses and artifacts, and the tree drawn as text or as a Mermaid flowchart."""

from __future__ import annotations

from collections.abc import Sequence

from memstrata.records.process import Artifact, Hypothesis, Step, StepStatus, Task
from memstrata.types import Frozen

_MARK = {StepStatus.SUCCEEDED: "✓", StepStatus.FAILED: "✗", StepStatus.RUNNING: "…"}


class TaskTree(Frozen):
    task: Task
    steps: tuple[Step, ...]  # in recording order
    hypotheses: tuple[Hypothesis, ...] = ()
    artifacts: tuple[Artifact, ...] = ()

    def children(self) -> dict[str | None, list[Step]]:
        """Steps by parent id (None: top level), in recording order. A step whose parent is unknown to the tree
        is shown at the top level rather than lost."""
        known = {step.id for step in self.steps}
        by_parent: dict[str | None, list[Step]] = {}
        for step in self.steps:
            parent = step.parent_id if step.parent_id in known else None
            by_parent.setdefault(parent, []).append(step)
        return by_parent

    def ordered(self) -> list[tuple[int, Step]]:
        """(depth, step) in depth-first order."""
        by_parent = self.children()
        out: list[tuple[int, Step]] = []
        stack = [(0, step) for step in reversed(by_parent.get(None, []))]
        while stack:
            depth, step = stack.pop()
            out.append((depth, step))
            stack.extend((depth + 1, child) for child in reversed(by_parent.get(step.id, [])))
        return out


def _short(text: str | None, limit: int) -> str:
    flat = " ".join((text or "").split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def step_label(step: Step, limit: int = 80) -> str:
    tags = [" [dead end]" if step.dead_end else "", f" ({step.cost_seconds:.1f}s)" if step.cost_seconds else ""]
    return f"{_MARK[step.status]} {step.action}: {_short(step.input, limit)}{''.join(tags)}"


def render_text(tree: TaskTree, *, limit: int = 80) -> str:
    """The tree as indented lines: status mark, action, input, tags; outputs under their step."""
    task = tree.task
    lines = [f"{task.goal}  [{task.task_type} · {task.status.value}]"]
    if task.outcome:
        lines.append(f"→ {_short(task.outcome, limit * 2)}")
    for depth, step in tree.ordered():
        indent = "  " * (depth + 1)
        lines.append(f"{indent}{step_label(step, limit)}")
        if step.output:
            lines.append(f"{indent}  = {_short(step.output, limit)}")
    for hypothesis in tree.hypotheses:
        lines.append(f"  ? {hypothesis.text} [{hypothesis.status.value}]")
    return "\n".join(lines)


def _mermaid_text(text: str) -> str:
    """Mermaid labels in quotes: quotes become #quot;, and line breaks spaces."""
    return " ".join(text.split()).replace('"', "#quot;")


def render_mermaid(tree: TaskTree, *, limit: int = 60) -> str:
    """A top-down flowchart: the task, each step under its parent; dead ends and failures styled apart."""
    lines = ["flowchart TD", f'    task["{_mermaid_text(_short(tree.task.goal, limit))}"]']
    names = {step.id: f"s{number}" for number, step in enumerate(tree.steps, start=1)}
    for _, step in tree.ordered():
        name = names[step.id]
        lines.append(f'    {name}["{_mermaid_text(step_label(step, limit))}"]')
        parent = names.get(step.parent_id or "", "task")
        lines.append(f"    {parent} --> {name}")
    classes = [
        ("deadend", [names[s.id] for s in tree.steps if s.dead_end], "fill:#fdd,stroke:#c00"),
        ("failed", [names[s.id] for s in tree.steps if s.status == StepStatus.FAILED and not s.dead_end],
         "fill:#fee,stroke:#a66"),
        ("worked", [names[s.id] for s in tree.steps if s.useful], "fill:#dfd,stroke:#080"),
    ]  # fmt: skip
    for name, members, style in classes:
        if members:
            lines.append(f"    classDef {name} {style}")
            lines.append(f"    class {','.join(members)} {name}")
    return "\n".join(lines)


def path_text(steps: Sequence[Step], limit: int = 80) -> list[str]:
    return [f"{step.action}: {_short(step.input, limit)}" for step in steps]
