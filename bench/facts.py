"""Short generated bilingual facts (half Chinese, half English) for speed and scale points.

Fact ``i`` is a pure function of ``i``: no storage, unique for any i, realistic term spread
(~2,000 names per language, 51 actions, 30 places, 30 times), so keyword search sees a
plausible vocabulary rather than one word shared by every row.
"""

from __future__ import annotations

import random


def _words(text: str, sep: str = " ") -> list[str]:
    return text.split(sep)


EN_FIRST = _words(
    "Maya Liam Olivia Noah Emma Ethan Ava Lucas Sophia Mason Isabella Logan Mia James Amelia Oliver Harper Elijah "
    "Evelyn Aiden Abigail Jacob Emily Carter Ella Daniel Scarlett Henry Grace Owen Chloe Samuel Lily Ryan Zoe Nathan "
    "Nora Leo Hannah Isaac"
)
EN_LAST = _words(
    "Chen Smith Garcia Novak Kim Patel Rossi Müller Silva Tanaka Dubois Kowalski Nguyen Haddad Okafor Larsen Ivanova "
    "Moreau Costa Fischer Romero Schmidt Yilmaz Andersen Murphy Khan Sato Lopez Bauer Weber Ortiz Park Reyes Clarke "
    "Hughes Price Ward Brooks Foster Kelly Hayes Bennett Wood Barnes Ross Perry Powell Long Russell"
)
ZH_SURNAME = list("王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜")
ZH_GIVEN = _words(
    "伟 芳 娜 敏 静 丽 强 磊 军 洋 勇 艳 杰 娟 涛 明 超 秀英 霞 平 刚 桂英 华 玉兰 萍 红 建华 文 辉 力 "
    "鹏 宇 浩 晨 欣怡 子涵 梓萱 一诺 思远 嘉豪 俊杰 雨桐 佳琪 雅婷 志强 海燕 春梅 国庆 晓东 丹"
)
EN_ACTIONS = _words(
    "adopted a beagle|started learning the cello|ran a half marathon|opened a small bakery|bought a used bicycle|"
    "moved into a flat|joined a chess club|planted tomatoes|finished a pottery course|visited the art museum|"
    "switched to a vegetarian diet|repaired an old motorbike|started a book club|learned to sail|adopted a tabby cat|"
    "broke a wrist skiing|got promoted to team lead|began volunteering at the shelter|wrote a short novel|"
    "took up rock climbing|bought an electric car|hosted a family reunion|learned to bake sourdough|"
    "started a podcast about history|planted an olive tree|joined a choir|sold a vintage camera|"
    "became allergic to peanuts|took a course in welding|painted the kitchen blue|won a photography contest|"
    "built a treehouse|learned Spanish|lost a wallet|found a stray puppy|started working night shifts|"
    "quit drinking coffee|got married|celebrated a tenth anniversary|met an old school friend|"
    "started yoga classes|fixed the garden fence|organised a charity run|read every Tolkien book|"
    "booked a trip to Iceland|planted sunflowers|took the driving test|started a vegetable garden|"
    "bought a piano|learned to knit|ran a coding workshop",
    "|",
)
ZH_ACTIONS = _words(
    "领养了一只小猎犬|开始学大提琴|跑了半程马拉松|开了一家小面包店|买了一辆二手自行车|搬进了新公寓|加入了象棋俱乐部|"
    "种了番茄|完成了陶艺课程|参观了美术馆|开始吃素|修好了旧摩托车|办了一个读书会|学会了帆船|领养了一只虎斑猫|"
    "滑雪摔伤了手腕|升职当了组长|开始在动物收容所做志愿者|写了一部短篇小说|开始攀岩|买了一辆电动车|"
    "办了一次家庭聚会|学会了烤酸面包|开了一个历史播客|种了一棵橄榄树|加入了合唱团|卖掉了一台老相机|"
    "发现自己对花生过敏|上了焊接课|把厨房刷成了蓝色|赢得了摄影比赛|搭了一个树屋|学了西班牙语|丢了钱包|"
    "捡到一只流浪小狗|开始上夜班|戒了咖啡|结婚了|庆祝了结婚十周年|见到了老同学|开始上瑜伽课|修好了花园的篱笆|"
    "组织了一次慈善跑|读完了金庸全集|订了去冰岛的旅行|种了向日葵|参加了驾照考试|开辟了一块菜园|买了一架钢琴|"
    "学会了织毛衣|办了一场编程工作坊",
    "|",
)
EN_PLACES = _words(
    "Lisbon Hangzhou Berlin Osaka Toronto Nairobi Lima Oslo Krakow Austin Melbourne Seville Chengdu Dublin Porto "
    "Zurich Denver Hanoi Bergen Tbilisi Quito Lyon Seattle Auckland Madrid Vienna Busan Kyoto Prague Boston"
)
ZH_PLACES = _words(
    "杭州 北京 上海 成都 重庆 西安 南京 武汉 苏州 厦门 青岛 大连 昆明 长沙 广州 深圳 天津 哈尔滨 拉萨 桂林 "
    "丽江 三亚 洛阳 开封 扬州 绍兴 宁波 福州 合肥 兰州"
)
EN_TIMES = _words(
    "last spring|in March|two years ago|last weekend|in 2019|over the summer|in December|last autumn|in 2021|"
    "a month ago|in early May|during the holidays|last year|in 2023|in January|after graduating|in June|"
    "in 2018|this winter|in late August|on a Tuesday|in 2020|before the pandemic|in April|last Christmas|"
    "in 2022|three weeks ago|in October|in 2017|in mid July",
    "|",
)
ZH_TIMES = _words(
    "去年春天|三月份|两年前|上周末|2019年|整个夏天|十二月|去年秋天|2021年|一个月前|五月初|假期里|去年|2023年|"
    "一月份|毕业后|六月|2018年|今年冬天|八月底|一个周二|2020年|疫情之前|四月|去年圣诞节|2022年|三周前|十月|2017年|七月中旬",
    "|",
)

_NAMES = len(EN_FIRST) * len(EN_LAST)
_COMBINATIONS = _NAMES * len(EN_ACTIONS) * len(EN_PLACES) * len(EN_TIMES)
_STEP = 7_001_221  # coprime with _COMBINATIONS: i -> i * _STEP is a bijection that scatters neighbours


def _parts(i: int) -> tuple[int, int, int, int]:
    j = (i * _STEP) % _COMBINATIONS
    j, name = divmod(j, _NAMES)
    j, action = divmod(j, len(EN_ACTIONS))
    j, place = divmod(j, len(EN_PLACES))
    return name, action, place, j % len(EN_TIMES)


def fact(i: int) -> str:
    """Fact number ``i``: even numbers English, odd numbers Chinese."""
    name, action, place, when = _parts(i)
    serial = i // _COMBINATIONS  # keeps texts unique past the combinations
    tail = f" (#{serial})" if serial else ""
    if i % 2 == 0:
        first, last = EN_FIRST[name % len(EN_FIRST)], EN_LAST[name // len(EN_FIRST) % len(EN_LAST)]
        return f"{first} {last} {EN_ACTIONS[action]} in {EN_PLACES[place]} {EN_TIMES[when]}.{tail}"
    surname = ZH_SURNAME[name % len(ZH_SURNAME)]
    given = ZH_GIVEN[name // len(ZH_SURNAME) % len(ZH_GIVEN)]
    return f"{surname}{given}{ZH_TIMES[when]}在{ZH_PLACES[place]}{ZH_ACTIONS[action]}。{tail}"


def facts(start: int, count: int) -> list[str]:
    return [fact(i) for i in range(start, start + count)]


def queries(count: int, seed: int = 7) -> list[str]:
    """Questions in both languages about names, actions and places that occur in the facts."""
    rng = random.Random(seed)
    out = []
    for n in range(count):
        action = rng.randrange(len(EN_ACTIONS))
        place = rng.randrange(len(EN_PLACES))
        if n % 4 == 0:
            out.append(f"Who {EN_ACTIONS[action]} in {EN_PLACES[place]}?")
        elif n % 4 == 1:
            out.append(f"谁在{ZH_PLACES[place]}{ZH_ACTIONS[action]}？")
        elif n % 4 == 2:
            out.append(f"What did {rng.choice(EN_FIRST)} {rng.choice(EN_LAST)} do in {EN_PLACES[place]}?")
        else:
            out.append(f"{rng.choice(ZH_SURNAME)}{rng.choice(ZH_GIVEN)}在{ZH_PLACES[place]}做了什么？")
    return out
