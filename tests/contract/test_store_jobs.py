"""The durable job queue, on every backend: claiming by scope, leases, and guarded completion."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memstrata import ConflictError
from memstrata.storage.protocol import JobUpdate, Store, WriteBatch
from memstrata.types import Job, JobStatus, Scope, TenantScope, new_id

T0 = datetime(2025, 1, 1, 9, 0, tzinfo=UTC)


def job(scope: Scope, status: JobStatus = JobStatus.QUEUED, *, at: datetime = T0) -> Job:
    return Job(
        id=new_id(), kind="extract", scope=scope, status=status, message_ids=(new_id(),), created_at=at, updated_at=at
    )


def test_claims_take_one_scope_oldest_first(store: Store) -> None:
    alice, bob = Scope(user_id="alice"), Scope(user_id="bob", tenant_id="acme")
    jobs = [job(alice, at=T0), job(bob, at=T0 + timedelta(seconds=1)), job(alice, at=T0 + timedelta(seconds=2))]
    store.write(WriteBatch(jobs=jobs))
    first = store.claim_jobs(T0, T0 + timedelta(minutes=5), limit=10)
    assert [j.id for j in first] == [jobs[0].id, jobs[2].id]  # both of alice's jobs, in one model call
    assert all(j.status == JobStatus.RUNNING and j.attempts == 1 for j in first)
    assert [j.id for j in store.claim_jobs(T0, T0 + timedelta(minutes=5), limit=10)] == [jobs[1].id]
    assert store.claim_jobs(T0, T0 + timedelta(minutes=5), limit=10) == []
    assert [j.id for j in store.list_jobs(bob, [JobStatus.RUNNING], 10)] == [jobs[1].id]
    assert store.list_jobs(Scope(user_id="bob"), list(JobStatus), 10) == []  # another tenant


def test_jobs_of_a_whole_tenant(store: Store) -> None:
    """A tenant view that names no user lists its tenant's jobs (``memstrata --tenant acme jobs`` failed)."""
    acme = [job(Scope(user_id="alice", tenant_id="acme")), job(Scope(agent_id="bot", tenant_id="acme"))]
    store.write(WriteBatch(jobs=[*acme, job(Scope(user_id="alice"))]))
    assert {j.id for j in store.list_jobs(TenantScope(tenant_id="acme"), list(JobStatus), 10)} == {j.id for j in acme}
    assert len(store.list_jobs(TenantScope(), list(JobStatus), 10)) == 1  # the default tenant
    assert len(store.list_jobs(None, list(JobStatus), 10)) == 3


def test_expired_lease_is_claimed_again_and_the_late_worker_is_refused(store: Store) -> None:
    scope = Scope(user_id="u", session_id="s")
    queued = job(scope)
    store.write(WriteBatch(jobs=[queued]))
    [claimed] = store.claim_jobs(T0, T0 + timedelta(seconds=10), limit=1)
    assert store.claim_jobs(T0 + timedelta(seconds=5), T0 + timedelta(seconds=15), limit=1) == []  # lease holds
    [again] = store.claim_jobs(T0 + timedelta(seconds=11), T0 + timedelta(seconds=30), limit=1)
    assert again.id == claimed.id and again.attempts == 2

    late = JobUpdate(queued.id, JobStatus.DONE, T0 + timedelta(seconds=12), result={"a": 1}, expected_attempts=1)
    with pytest.raises(ConflictError, match="claimed again"):
        store.write(WriteBatch(jobs=[job(scope)], job_updates=[late]))
    assert len(store.list_jobs(scope, list(JobStatus), 10)) == 1  # the whole batch rolled back
    done = JobUpdate(
        queued.id, JobStatus.DONE, T0 + timedelta(seconds=13), result={"facts": ["水"]}, expected_attempts=2,
        raw_output="raw\x00output",
    )  # fmt: skip
    store.write(WriteBatch(job_updates=[done]))
    [finished] = store.list_jobs(scope, [JobStatus.DONE], 10)
    assert finished.result == {"facts": ["水"]} and finished.lease_until is None and finished.raw_output


def test_waiting_jobs_are_released_by_exact_scope(store: Store) -> None:
    session = Scope(user_id="u", session_id="s")
    waiting = [job(session, JobStatus.WAITING), job(Scope(user_id="u"), JobStatus.WAITING)]
    store.write(WriteBatch(jobs=waiting))
    assert store.claim_jobs(T0, T0 + timedelta(minutes=1), limit=10) == []
    store.write(WriteBatch(release_waiting=[session]))
    assert [j.id for j in store.list_jobs(None, [JobStatus.QUEUED], 10)] == [waiting[0].id]
    assert [j.id for j in store.list_jobs(Scope(user_id="u"), [JobStatus.WAITING], 10)] == [waiting[1].id]
