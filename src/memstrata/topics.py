"""Everyday topics people state and update (where they live, work, what they drink, their pet, their age ...), in
either language. The write path ties a new fact to a stored one by a shared topic (write/evidence.py); the read path
tells which of a statement's topics a correction is of (read/newer.py)."""

from __future__ import annotations

import re
from functools import lru_cache

from memstrata.han import simplified
from memstrata.patterns import lazy_pattern

# Everyday topics people update. Over-inclusive on purpose: a topic only allows a question, the judge answers it.
TOPICS: dict[str, re.Pattern[str]] = {
    name: lazy_pattern(pattern, re.I)
    for name, pattern in {
        "home": r"住(?!院)|搬|老家|房子|公寓|定居|"
        r"\b(live[sd]?|living|mov(e|ed|ing)|relocat\w*|apartment|house|home|based in)\b",
        "work": r"工作|上班|公司|跳槽|离职|入职|辞职|任职|退休|实习|岗位|职位|开发|工程师|程序员|设计师|经理|运营|"
        r"销售|老师|医生|护士|律师|会计|科学家|分析师|研究员|架构师|"
        r"\b(jobs?|work(s|ed|ing)?|employ\w*|company|hired|career|quit|retired?|scientist|analyst|researcher|"
        r"position|intern\w*|engineer|developer|designer|manager|nurse|teacher|doctor|lawyer|accountant)\b",
        "drink": r"喝|茶|咖啡|酒|饮料|\b(drinks?|drinking|tea|coffee|beer|wine|water|juice|latte|espresso)\b",
        # not 素 alone: 青霉素 (penicillin) is no diet
        "diet": r"吃|素食|肉|辣|香菜|饮食|海鲜|"
        r"\b(eats?|eating|vegan|vegetarian|pescatarian|keto|meat|steak|fish|seafood|spicy|food|diet|coriander)\b",
        # a stay in hospital: "用户的林晓妈妈住院了" was closed by "林晓 is now a pescatarian" (a user trial)
        "health": r"过敏|烟|酒|病|药|住院|手术|血压|"
        r"\b(allerg\w*|smok\w*|cigarettes?|vap\w*|sick|illness|medication|hospital\w*|surgery|blood pressure)\b",
        "pet": r"猫|狗|宠物|\b(cats?|dogs?|pets?|pupp(y|ies)|kittens?)\b",
        "vehicle": r"车|特斯拉|比亚迪|摩托|\b(cars?|driv\w*|tesla|bmw|toyota|honda|motorbike|scooter|bike)\b",
        "exercise": r"健身|跑步|游泳|运动|瑜伽|爬山|\b(gym|run(s|ning)?|swim\w*|workout|yoga|hik\w*|marathon)\b",
        "partner": r"男朋友|女朋友|老公|老婆|丈夫|妻子|结婚|离婚|分手|恋爱|单身|\b(single|married|boyfriend|girlfriend|"
        r"husband|wife|divorc\w*|dating|broke up|engaged)\b",
        "device": r"手机|电脑|笔记本|\b(phones?|iphone|android|pixel|laptop|computer|macbook|thinkpad)\b",
        "season": r"冬天|夏天|春天|秋天|\b(winter|summer|spring|autumn)\b",
        # "用户换号码了，新号码是…" changes "用户手机号是…", with no word in common (号码 / 手机号; a user trial)
        "contact": r"号码|电话|手机号|微信号?|邮箱|\b(phone|mobile|cell|telephone|e-?mail|wechat|whatsapp)\b",
        "travel": r"旅游|旅行|出差|度假|机票|签证|\b(trips?|travel\w*|vacation|holidays?|flights?|visa|tour(s|ing)?)\b",
        "name": r"叫|名字|\b(name[sd]?|called)\b",
        "study": r"学习|上学|课程|学校|大学|专业|考试|幼儿园|小学|中学|年级|大班|中班|小班|"
        r"\b(stud(y|ies|ying)|course|class(es)?|school|university|degree|kindergarten|grade)\b",
        # "User corrected the age of 朵朵 to 5" is no change of "朵朵在上海的星光幼儿园上大班" (a user trial)
        "age": r"[\d一二三四五六七八九十两]\s*岁|几岁|年龄|多大|"
        r"\b(ages?|aged|\d+\s+years?\s+old|turns? \d+|how\s+old)\b",
    }.items()
}


@lru_cache(maxsize=65_536)  # ranking reads the topics of a memory against many others
def topics_of(text: str) -> frozenset[str]:
    """The topics ``text`` speaks of, Traditional text read as Simplified ("我養了一隻貓叫小橘" has a pet)."""
    said = simplified(text)
    return frozenset(name for name, pattern in TOPICS.items() if pattern.search(said))
