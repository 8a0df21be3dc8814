"""Old names of ``storage/copy.py`` (the backend copy behind ``memstrata migrate``), kept for importers."""

from memstrata.storage.copy import TABLES, CopyReport, copy_store, verify_copy

TransferReport = CopyReport
transfer = copy_store
verify = verify_copy

__all__ = ["TABLES", "TransferReport", "transfer", "verify"]
