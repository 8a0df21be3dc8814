"""Everyday questions about the user, in both languages, against a small store of statements that answer them in
other words: a category asked for an instance said ("What pets do I have?" / "Just adopted a beagle puppy"),
a question in one language for a statement in the other ("我开什么车？" / "Bought a Tesla Model Y").

Written for this project by hand (not from a dev set): statements, most of which answer a question in each
language, others distractors, and questions, each with every statement that answers it. A question counts when
every answer is among its top hits (as many hits as it has answers). Real store, bundled embedder, default search.
To compare two versions, run this file from each tree (``PYTHONPATH=<tree>:<tree>/src``).

    python -m bench.everyday_questions [--suffix NAME]
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from typing import Any

from tqdm import tqdm

from bench.machine import machine_facts, machine_line
from memstrata import Memory

RESULTS = Path(__file__).resolve().parent / "results"

ANSWERS = {
    "pets": ["Just adopted a beagle puppy", "我家的猫叫团子"],
    "car": ["用户车是特斯拉Model 3", "Bought a Tesla Model Y last month"],
    "sport": ["我周末喜欢打羽毛球", "I go swimming every morning"],
    "instrument": ["I play the guitar in a band", "我会弹钢琴"],
    "language": ["I'm learning Spanish before my trip", "我在学日语"],
    "job": ["I'm a nurse at Ruijin Hospital", "我是一名小学老师", "I work at Google as a data engineer"],
    "kids": ["My son Tom just turned five", "我女儿在上初中"],
    "health": ["I have type 2 diabetes", "我有高血压", "我对花生过敏"],
    "diet": ["I can't eat shellfish", "我是素食主义者"],
    "hometown": ["我老家在四川绵阳", "I grew up in Ohio"],
    "birthday": ["我的生日是五月三号"],
    "wife": ["My wife is called Anna", "我老婆叫林小雨"],
    "age": ["I'm 34 years old", "我今年28岁"],
    "fear": ["I'm afraid of heights", "我怕蛇"],
}
DISTRACTORS = [
    "My sister lives in Berlin", "We went to the zoo and saw a panda", "I had a hot dog for lunch",
    "The train station was crowded", "I finished reading a novel about time travel", "我周末去爬了香山",
    "My mom is visiting next week", "我最近在减肥", "Had a long meeting with my manager about the roadmap",
    "我昨天去超市买了很多水果", "I love spicy Sichuan food", "Watched a documentary about whales", "我女朋友喜欢看电影",
    "我每天早上喝咖啡", "Our team shipped the new release", "我住在杭州西湖区", "I need to renew my passport",
    "周末和朋友去吃火锅了",
]  # fmt: skip
QUESTIONS = [
    ("What pets do I have?", "pets"), ("我养了什么宠物？", "pets"),
    ("What car do I drive?", "car"), ("我开什么车？", "car"),
    ("What sports do I do?", "sport"), ("我做什么运动？", "sport"),
    ("What instruments can I play?", "instrument"), ("我会什么乐器？", "instrument"),
    ("What languages am I learning?", "language"), ("我在学什么语言？", "language"),
    ("What do I do for a living?", "job"), ("我是做什么职业的？", "job"),
    ("Do I have kids?", "kids"), ("我有孩子吗？", "kids"),
    ("Do I have any health problems?", "health"), ("我有什么病？", "health"),
    ("What are my dietary restrictions?", "diet"), ("我有什么忌口？", "diet"),
    ("Where did I grow up?", "hometown"), ("我老家是哪里的？", "hometown"),
    ("When is my birthday?", "birthday"), ("我生日是哪天？", "birthday"),
    ("What's my wife's name?", "wife"), ("我老婆叫什么？", "wife"),
    ("How old am I?", "age"), ("我多大了？", "age"),
    ("What am I afraid of?", "fear"), ("我害怕什么？", "fear"),
]  # fmt: skip


def run() -> dict[str, Any]:
    statements = [text for texts in ANSWERS.values() for text in texts] + DISTRACTORS
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as folder:
        memory = Memory.from_config({"store": {"path": f"{folder}/memory.db"}})
        memory.add(statements, user_id="u", infer=False)
        for question, topic in tqdm(QUESTIONS, desc="questions"):
            wanted = ANSWERS[topic]
            hits = memory.search(question, user_id="u", limit=5)
            top = [hit.memory.text for hit in hits]
            rows.append({"question": question, "answers": wanted, "top": top[:3],
                         "scores": [round(hit.score, 2) for hit in hits[:3]],
                         "found": set(wanted) <= set(top[: len(wanted)])})  # fmt: skip
        memory.close()
    found = sum(row["found"] for row in rows)
    return {"machine": machine_facts(), "statements": len(statements), "questions": rows, "found": found}


def markdown(result: dict[str, Any]) -> str:
    found = f"{result['found']} of {len(result['questions'])} questions have every answer among their top hits"
    lines = ["## Everyday questions in both languages", "", machine_line(result["machine"]), "",
             f"{found} ({result['statements']} statements).", "", "| question | found | top hits (score) |",
             "|---|---|---|"]  # fmt: skip
    for row in result["questions"]:
        tops = " · ".join(f"{text} ({score})" for text, score in zip(row["top"], row["scores"], strict=False))
        lines.append(f"| {row['question']} | {'yes' if row['found'] else 'no'} | {tops} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suffix", default="")
    args = parser.parse_args()
    result = run()
    name = f"{result['machine']['when_utc'][:10]}-everyday-questions{'-' + args.suffix if args.suffix else ''}"
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{name}.json").write_text(json.dumps(result, ensure_ascii=False, indent=1), encoding="utf-8")
    (RESULTS / f"{name}.md").write_text(markdown(result), encoding="utf-8")
    print(markdown(result))


if __name__ == "__main__":
    main()
