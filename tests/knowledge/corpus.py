"""A small bilingual corpus with one planted fact per document, written as real files of every format.

Each document has three sections (three PDF pages, four slides with the title slide); the planted
sentence sits in the second section, so page and heading provenance can be checked, and the filler
around it is ordinary prose about the same company, so a question has to find the right chunk.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.chunk_docs import Document, Section, write  # noqa: E402  (the repo root must be importable first)

FORMATS = ("docx", "pptx", "xlsx", "pdf", "html")


@dataclass(frozen=True)
class Planted:
    fmt: str
    lang: str
    heading: str  # the section holding the fact
    sentence: str
    question: str


PLANTED = [
    Planted("docx", "zh", "仓库管理", "杭州仓库的门禁密码是七三九一。", "杭州仓库的门禁密码是多少？"),
    Planted("pptx", "zh", "人员安排", "夜班安全巡逻由张伟负责。", "谁负责夜班安全巡逻？"),
    Planted("xlsx", "zh", "采购", "新的采购主管李娜来自成都。", "新的采购主管来自哪个城市？"),
    Planted("pdf", "zh", "财务制度", "报销单据必须在每月十五日之前提交给财务部。", "报销单据最晚什么时候提交？"),
    Planted("html", "zh", "客户服务", "客服热线的工作时间是早上八点到晚上十点。", "客服热线几点下班？"),
    Planted("docx", "en", "Warehouse",
            "The Denver warehouse door code is 4417.", "What is the Denver warehouse door code?"),
    Planted("pptx", "en", "Staffing",
            "Maria Lopez runs the night security patrol.", "Who runs the night security patrol?"),
    Planted("xlsx", "en", "Purchasing",
            "The new purchasing lead, Tom Reed, moved here from Austin.", "Where is the purchasing lead from?"),
    Planted("pdf", "en", "Finance",
            "Expense receipts must reach finance by the 15th of each month.", "When are expense receipts due?"),
    Planted("html", "en", "Support",
            "The support hotline is staffed from 8 am to 10 pm.", "When does the support hotline close?"),
]  # fmt: skip

_FILLER = {
    "zh": (
        "公司成立于二零一二年，总部设在上海，员工约三百人。",
        "我们的使命是为中小企业提供可靠的物流服务。",
        "所有员工入职时都要参加为期两天的安全培训。",
        "年度团建活动通常安排在十月，地点每年轮换。",
    ),
    "en": (
        "The company was founded in 2012 and has about three hundred employees.",
        "Our mission is to give small businesses logistics they can rely on.",
        "Every new employee attends two days of safety training.",
        "The yearly team retreat takes place in October at a different venue each year.",
    ),
}


def document_for(planted: Planted) -> Document:
    filler = _FILLER[planted.lang]
    intro = "公司简介" if planted.lang == "zh" else "About us"
    closing = "其他事项" if planted.lang == "zh" else "Other matters"
    title = f"{'员工手册' if planted.lang == 'zh' else 'Staff handbook'} {planted.fmt}"
    return Document(
        title,
        (
            Section(intro, filler[:2]),
            Section(planted.heading, (filler[2], planted.sentence)),
            Section(closing, filler[3:]),
        ),
        lang=planted.lang,
    )


def write_planted(directory: Path, planted: Planted) -> Path:
    return write(document_for(planted), directory, f"{planted.lang}-{planted.fmt}", planted.fmt)


def write_corpus(directory: Path) -> dict[Path, Planted]:
    directory.mkdir(parents=True, exist_ok=True)
    return {write_planted(directory, planted): planted for planted in PLANTED}
