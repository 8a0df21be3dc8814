"""MCP tools for process memory: an agent records how it works through a task (start, steps, hypotheses,
finish), recalls what worked in similar tasks, checks a plan against recorded dead ends before spending the
time, and asks for mined strategies. Compressing and restoring are left to people (REST, CLI)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from pydantic import Field

from memstrata.mcp_server.common import READ_ONLY, AgentId, Callers, SessionId, UserId, reported, writes
from memstrata.process.plan_check import PlannedStep, PlanWarning
from memstrata.process.recall import RecalledTask
from memstrata.records.process import Hypothesis, Step, Strategy, Task

TaskId = Annotated[str, Field(description="a task id, as returned by task_start")]
Action = Annotated[str, Field(description="search, query, run, read, hypothesize, summarize, ask_human, or your own")]


def register_task_tools(server: MCPServer, callers: Callers) -> None:
    scoped = callers.scoped

    @server.tool(annotations=writes("Start task", destructive=False))
    @reported
    def task_start(
        ctx: Context[Any, Any],
        goal: Annotated[str, Field(description="what the task is for, in the user's language")],
        task_type: Annotated[str, Field(description="debugging, research, analysis, ... (lowercase)")] = "general",
        context: Annotated[str | None, Field(description="what is known at the start")] = None,
        constraints: Annotated[list[str] | None, Field(description="limits the work must respect")] = None,
        user_id: UserId = None,
        agent_id: AgentId = None,
        session_id: SessionId = None,
    ) -> Task:
        """Start recording a multi-step task (debugging, research, data analysis). Call task_recall first to
        reuse what worked before, then record each step with task_record_step and close with task_finish."""
        view, scope, _ = scoped(ctx, user_id, agent_id, session_id)
        return view.tasks.begin(goal, task_type=task_type, context=context, constraints=constraints or (), **scope)

    @server.tool(annotations=writes("Record step", destructive=False))
    @reported
    def task_record_step(
        ctx: Context[Any, Any],
        task_id: TaskId,
        action: Action,
        input: Annotated[str, Field(description="what the step did: the query, the command, the question")],
        output: Annotated[str | None, Field(description="what came back (short)")] = None,
        reasoning: Annotated[str | None, Field(description="why you took this step")] = None,
        status: Annotated[
            Literal["succeeded", "failed", "running"] | None,
            Field(description="default succeeded (failed for a dead end)"),
        ] = None,
        dead_end: Annotated[bool, Field(description="true: this did not help and should not be tried again")] = False,
        parent_id: Annotated[str | None, Field(description="the step this one followed from")] = None,
        hypothesis: Annotated[str | None, Field(description="a hypothesis this step proposes")] = None,
        hypothesis_id: Annotated[str | None, Field(description="the hypothesis this step tests")] = None,
        confidence: Annotated[float | None, Field(ge=0, le=1)] = None,
        cost_seconds: Annotated[float | None, Field(ge=0)] = None,
        cost_tokens: Annotated[int | None, Field(ge=0)] = None,
        user_id: UserId = None,
        agent_id: AgentId = None,
        session_id: SessionId = None,
    ) -> Step:
        """Record one step of a task as it happens (stored at once: nothing is lost if you stop midway)."""
        view, scope, _ = scoped(ctx, user_id, agent_id, session_id)
        given = {"output": output, "reasoning": reasoning, "parent_id": parent_id, "hypothesis": hypothesis,
                 "hypothesis_id": hypothesis_id, "confidence": confidence, "cost_seconds": cost_seconds,
                 "cost_tokens": cost_tokens, "status": status}  # fmt: skip
        fields = {name: value for name, value in given.items() if value is not None}
        return view.tasks.record_step(task_id, action, input, dead_end=dead_end, **fields, **scope)

    @server.tool(annotations=writes("Update step", destructive=False, idempotent=True))
    @reported
    def task_update_step(
        ctx: Context[Any, Any],
        step_id: Annotated[str, Field(description="a step id, as returned by task_record_step")],
        output: Annotated[str | None, Field(description="what came back")] = None,
        status: Annotated[Literal["succeeded", "failed"] | None, Field()] = None,
        dead_end: Annotated[bool | None, Field(description="true: not worth trying again")] = None,
        confidence: Annotated[float | None, Field(ge=0, le=1)] = None,
        user_id: UserId = None,
        agent_id: AgentId = None,
        session_id: SessionId = None,
    ) -> Step:
        """End a step recorded as running, or mark a step a dead end once you know it was one."""
        view, scope, _ = scoped(ctx, user_id, agent_id, session_id)
        given = {"output": output, "status": status, "dead_end": dead_end, "confidence": confidence}
        return view.tasks.update_step(step_id, **{k: v for k, v in given.items() if v is not None}, **scope)

    @server.tool(annotations=writes("Resolve hypothesis", destructive=False, idempotent=True))
    @reported
    def task_resolve_hypothesis(
        ctx: Context[Any, Any],
        hypothesis_id: Annotated[str, Field(description="from the step that proposed it (hypothesis_id)")],
        status: Literal["supported", "refuted"],
        evidence: Annotated[list[str] | None, Field(description="ids of the steps that show it")] = None,
        user_id: UserId = None,
        agent_id: AgentId = None,
        session_id: SessionId = None,
    ) -> Hypothesis:
        """A hypothesis held or did not; refuting it marks the step that proposed it as a dead end."""
        view, scope, _ = scoped(ctx, user_id, agent_id, session_id)
        return view.tasks.resolve_hypothesis(hypothesis_id, status, evidence=evidence or (), **scope)

    @server.tool(annotations=writes("Finish task", destructive=False, idempotent=True))
    @reported
    def task_finish(
        ctx: Context[Any, Any],
        task_id: TaskId,
        outcome: Annotated[str | None, Field(description="what the task achieved, or why it stopped")] = None,
        status: Literal["succeeded", "failed", "abandoned"] = "succeeded",
        confidence: Annotated[float | None, Field(ge=0, le=1)] = None,
        user_id: UserId = None,
        agent_id: AgentId = None,
        session_id: SessionId = None,
    ) -> Task:
        """Close a task with its outcome; it becomes experience for similar tasks later."""
        view, scope, _ = scoped(ctx, user_id, agent_id, session_id)
        return view.tasks.finish(task_id, outcome, status=status, confidence=confidence, **scope)

    @server.tool(annotations=READ_ONLY)
    @reported
    def task_recall(
        ctx: Context[Any, Any],
        goal: Annotated[str, Field(description="the new task's goal")],
        task_type: Annotated[str | None, Field(description="the new task's type")] = None,
        limit: Annotated[int, Field(ge=1, le=20)] = 3,
        user_id: UserId = None,
        agent_id: AgentId = None,
        session_id: SessionId = None,
    ) -> list[RecalledTask]:
        """Before a multi-step task: similar past tasks, each with the steps that worked (path) and the ones
        that were dead ends. Start from what worked; do not repeat the dead ends."""
        view, scope, _ = scoped(ctx, user_id, agent_id, session_id)
        return view.tasks.recall(goal, task_type=task_type, limit=limit, **scope)

    @server.tool(annotations=READ_ONLY)
    @reported
    def task_check_plan(
        ctx: Context[Any, Any],
        steps: Annotated[list[PlannedStep], Field(min_length=1, description="planned steps: action, input, intent")],
        task_id: Annotated[str | None, Field(description="the task the plan is for")] = None,
        user_id: UserId = None,
        agent_id: AgentId = None,
        session_id: SessionId = None,
    ) -> list[PlanWarning]:
        """Before spending time on planned steps: which of them were dead ends in earlier tasks (same action,
        similar input), with what happened then. An empty list means no known dead end."""
        view, scope, _ = scoped(ctx, user_id, agent_id, session_id)
        return view.tasks.check_plan(task_id, steps, **scope)

    @server.tool(annotations=READ_ONLY)
    @reported
    def task_strategies(
        ctx: Context[Any, Any],
        context: Annotated[str | None, Field(description="the situation or goal to find strategies for")] = None,
        task_type: Annotated[str | None, Field(description="only strategies for this task type")] = None,
        limit: Annotated[int, Field(ge=1, le=50)] = 5,
        user_id: UserId = None,
        agent_id: AgentId = None,
        session_id: SessionId = None,
    ) -> list[Strategy]:
        """Action sequences that worked in earlier tasks, with success rates and counter-examples."""
        view, scope, _ = scoped(ctx, user_id, agent_id, session_id)
        return view.tasks.strategies(context=context, task_type=task_type, limit=limit, **scope)

    @server.tool(annotations=READ_ONLY)
    @reported
    def task_show(
        ctx: Context[Any, Any],
        task_id: TaskId,
        format: Literal["text", "mermaid"] = "text",
        user_id: UserId = None,
        agent_id: AgentId = None,
        session_id: SessionId = None,
    ) -> str:
        """A task's step tree, as indented text or as a Mermaid flowchart."""
        view, scope, _ = scoped(ctx, user_id, agent_id, session_id)
        return view.tasks.render(task_id, format, **scope)
