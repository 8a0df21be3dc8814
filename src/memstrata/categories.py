"""The kind of thing a statement names, in the words a question asks for that kind: "Just adopted a beagle puppy"
answers "What pets do I have?", "用户车是特斯拉Model 3" answers "What car do I drive?" / "我开什么车？",
"我是一名小学老师" answers "What do I do for a living?". The statement names an instance (a breed, a brand, a job
title) and the question the category, so they share no word, and the bundled embedder put them far apart (beagle
puppy / pets: relevance 0.10; Tesla / car: nothing returned at all). Indexed beside the statement, the category's
words in both languages let either language's question find it (see :func:`memstrata.answers.answer_words`).

Each table lists instances specific enough to name their category (a breed, a car brand, a diagnosis); words with
other common senses are left out or fenced ("hot dog", 热狗, 熊猫, 大众点评). The words added name the category
("pets", "diet"), not what one does with it ("eat", "music"): those are in every long conversation a query may be.
"""

from __future__ import annotations

import re
from functools import lru_cache

from memstrata.han import HAN_RANGES
from memstrata.patterns import lazy_pattern
from memstrata.same_names import RELATIONS, relatives_in_other_script, whole_words

_HAN = lazy_pattern(f"[{HAN_RANGES}]")
_LATIN = lazy_pattern(r"(?<![A-Za-z])[a-z]{3,}(?![A-Za-z])")  # an English word, not only names ("Bart在公园")

_WEEKDAY = r"(?:mon|tues|wednes|thurs|fri|satur|sun)"
_PARTNER_WORDS = "partner dating relationship fiance fiancee 伴侣 对象 另一半"
# A statement that starts with someone else: their news ("My sister got engaged", "我姐订婚了", "她男朋友…"), also as
# they told it ("佳佳說她跟男友訂婚了" was the user's partner for "Who was my boyfriend?"; a held-out trial).
_SOMEONE_ELSES = lazy_pattern(
    r"\s*(?:(?:my|our)\s+(?:sister|brother|mom|mum|mother|dad|father|friend|son|daughter|cousin|colleague)s?\b"
    r"|(?:he|she|they)\b|我(?:的|家)?[哥姐弟妹爸妈]|[他她]|(?:我的?)?(?:闺蜜|好友|朋友|同事|室友|同学|邻居)"
    r"|(?:(?!我)[^，。！？,.!?\s]){1,6}?[说說][她他]|(?-i:[A-Z])[a-z]+\s+(?:says|said|told\s+me)\s+(?:she|he)\b)",
    re.IGNORECASE,
)
# The words of an illness (a diagnosis), which deep/profile.py also reads: a condition is no allergy unless it says so.
ILLNESS_WORDS = "health condition illness disease chronic problem problems 健康 病 疾病 慢性病 问题"
_CATEGORIES: tuple[tuple[re.Pattern[str], str], ...] = (
    (  # pets
        lazy_pattern(
            r"(?<!hot\s)"
            + whole_words(
                r"dogs? pupp(?:y|ies) cats? kittens? kitty hamsters? rabbits? bunn(?:y|ies) parrots? budgies? goldfish"
                r" turtles? tortoises? guinea\s+pigs? ferrets? geckos? beagles? poodles? labradors? retrievers?"
                r" corgis? husk(?:y|ies) bulldogs? terriers? shibas? dachshunds? chihuahuas? pugs? schnauzers?"
                r" spaniels? collies?"
            )
            + r"|(?<![热成])(?<!单身)狗(?![仔血])|(?<![熊])猫(?![眼头])|仓鼠|兔子|鹦鹉|金鱼|乌龟|金毛|柯基|哈士奇|泰迪"
            r"|柴犬|布偶猫|英短|橘猫|拉布拉多|边牧|萨摩耶|博美|比熊|雪纳瑞|龙猫",
            re.IGNORECASE,
        ),
        "pet pets 宠物",
    ),
    (  # a dog by its breed: "What's my dog's name?" and "We have a border collie called Biscuit" share no word
        lazy_pattern(
            whole_words(
                r"beagles? poodles? labradors? retrievers? corgis? husk(?:y|ies) bulldogs? terriers? shibas?"
                r" dachshunds? chihuahuas? pugs? schnauzers? spaniels? collies? greyhounds? dalmatians?"
            )
            + r"|金毛|柯基|哈士奇|泰迪|柴犬|拉布拉多|边牧|萨摩耶|博美|比熊|雪纳瑞|阿拉斯加"
            # and by its kind in the other language: "Do I have a dog?" and "我家狗叫豆豆" share no word
            + r"|(?<!hot\s)\b(?:dogs?|pupp(?:y|ies))\b|(?<![热成])(?<!单身)狗(?![仔血])",
            re.IGNORECASE,
        ),
        "dog dogs 狗",
    ),
    (  # a cat by its breed
        lazy_pattern(
            whole_words(r"ragdolls? siamese persian\s+cats? shorthairs? maine\s+coons? cats? kittens? kitty")
            + r"|布偶猫|英短|美短|暹罗猫|狸花|(?<![熊])猫(?![眼头])",  # "Do I have a cat?" and "又收养了一只橘猫"
            re.IGNORECASE,
        ),
        "cat cats 猫",
    ),
    (  # cars: a brand or model, unless it is where someone works ("I work at Tesla", "开始在蔚来做战略了")
        lazy_pattern(
            r"(?<!\bat\s)(?<!\bfor\s)(?<!\bjoined\s)(?<!在)(?<!加入)(?<!入职)"
            + whole_words(
                r"tesla model\s+[3ysx] bmw audi toyota honda mercedes benz volkswagen vw porsche nissan hyundai kia"
                r" subaru mazda volvo lexus jeep chevrolet chevy byd prius camry civic corolla"
            )
            + r"|(?<!在)(?<!加入)(?<!入职)(?:特斯拉|宝马|奥迪|丰田|本田|奔驰|大众汽车|比亚迪|理想汽车|蔚来|小鹏"
            r"|保时捷|日产|吉利|凯美瑞|卡罗拉|雅阁|思域|问界|极氪|小米SU7|理想\s?(?:L\d|MEGA|ONE)\b)"
            + r"|"
            + whole_words(r"cars? sedan suv hatchback minivan pickup\s+truck")
            + r"|轿车|电动车|新能源车|越野车|新车|买车|开车|提车|车牌|[一两]辆",
            re.IGNORECASE,
        ),
        "car drive vehicle 车 汽车 开车 交通工具 座驾",  # "我的交通工具是什么？", "What vehicle do I own?"
    ),
    (  # health conditions: a diagnosis answers "我有什么病？" / "Do I have any chronic illness?"
        lazy_pattern(
            whole_words(
                r"diabet(?:es|ic) hypertension high\s+blood\s+pressure asthma arthritis migraines? depression cancer"
                r" insomnia eczema adhd high\s+cholesterol celiac gout thyroid heart\s+disease allerg(?:y|ies|ic)"
                r" cataracts? glaucoma anemia osteoporosis kidney\s+stones? gastritis"
            )
            + r"|糖尿病|高血压|哮喘|关节炎|偏头痛|抑郁症|癌|失眠|湿疹|过敏|高血脂|痛风|甲状腺|心脏病|胃病|鼻炎|颈椎病"
            r"|白内障|青光眼|冠心病|脂肪肝|贫血|骨质疏松|肾结石|胃炎|腰椎间盘突出|乳糖不耐",
            re.IGNORECASE,
        ),
        ILLNESS_WORDS,
    ),
    (  # an injury or an operation is a health problem, not an illness: "前天打篮球把膝盖伤了" answers
        # "我有过哪些健康问题？"; "12月15号要去做白内障手术" answers "我有什么病？" by the cataract, not by the
        # operation (a user trial)
        lazy_pattern(
            whole_words(r"injur(?:y|ies|ed) sprained fractured concussion surgery hospitali[sz]ed")
            + r"|受伤|伤了|骨折|扭伤|拉伤|手术|住院|骨裂",
            re.IGNORECASE,
        ),
        "health problem problems 健康 问题",
    ),
    (  # an allergy said in Chinese, in English words: "What am I allergic to?" of "我对青霉素过敏" matched no word
        # where an English statement of the scope said "allergic" (so the word was not asked in Chinese too; a user
        # trial). An English statement says its own word; 过敏 for it is left to the translation step (not measured)
        lazy_pattern(r"过敏"),
        "allergy allergies allergic",
    ),
    (  # COVID, as Chinese speakers say they caught it ("阳了", "转阴"): "Did I ever catch COVID?" found nothing
        lazy_pattern(r"\bcovid(?:-?19)?\b|\bcoronavirus\b|新冠|阳了|阳性|转阴|阳康", re.IGNORECASE),
        "covid 新冠 阳",
    ),
    (  # children
        lazy_pattern(whole_words("sons? daughters?") + r"|儿子|女儿|闺女", re.IGNORECASE),
        "kids children child 孩子 小孩",
    ),
    (  # what someone does for a living, whoever it is ("I'm a nurse", "我妈是医生")
        lazy_pattern(
            r"\b(?:i'?m|i\s+am|(?:he|she)['’]s|is|was|works?\s+as|worked\s+as)\s+(?:a|an)\s+(?:[\w-]+\s+){0,2}?"
            + whole_words(
                r"nurse teacher engineer doctor physician developer programmer designer lawyer accountant manager"
                r" architect chef pharmacist dentist professor scientist researcher analyst consultant writer"
                r" journalist photographer student salesperson driver police\s+officer firefighter electrician plumber"
                r" vet veterinarian surgeon therapist pilot artist musician barista mechanic"
            )
            # a title right after 是 with one character between is a name: 是李老师 (Teacher Li), 是王医生
            + r"|(?:是|当|做)(?:一名|一个|一位|个)?(?:[^，。！？,.!?\s]{2,6}?)?"
            r"(?:护士|老师|教师|工程师|医生|程序员|设计师|律师|会计|经理|建筑师|厨师|药剂师|牙医|教授|研究员|分析师"
            r"|顾问|作家|记者|摄影师|学生|公务员|销售|司机|警察|消防员|电工)",
            re.IGNORECASE,
        ),
        "work job occupation 工作 职业",
    ),
    (  # sports
        lazy_pattern(
            whole_words(
                r"badminton tennis basketball football soccer swimming jogging yoga golf volleyball table\s+tennis"
                r" ping\s+pong hiking cycling skiing climbing baseball boxing marathons?"
                r" (?:go|goes|going|went)\s+(?:running|jogging|swimming|climbing|hiking)"  # not "running a shop"
            )
            + r"|羽毛球|网球|篮球|足球|游泳|跑步|瑜伽|高尔夫|排球|乒乓球|徒步|骑行|滑雪|攀岩|健身|拳击|马拉松|爬山",
            re.IGNORECASE,
        ),
        "sport sports exercise hobby hobbies 运动 爱好",
    ),
    (  # where one works out, named by a chain or a kind of class without the word "gym" ("Switched to Form Studio
        # … rehab pilates", "Signed up at 超级猩猩": "Which gym do I go to now?" found the gym of two years before)
        lazy_pattern(
            whole_words(r"gyms? pilates crossfit hiit spin\s+class(?:es)?")
            + r"|健身房|普拉提|超级猩猩|乐刻|撸铁|私教课"
            # a chain or a club joined by name: "Joined Leith Links Leisure for the pool", "办了石榴健身的年卡"
            r"|\b(?:joined|signed\s+up\s+(?:at|with|for))\s+(?-i:[A-Z])[\w&' -]{0,30}?\b(?:fitness|leisure|athletic|"
            r"sports?\s+(?:club|cent(?:re|er))|swim(?:ming)?\s+club)\b|健身(?:的)?(?:年卡|月卡|会员)",
            re.IGNORECASE,
        ),
        "gym 健身房 健身",
    ),
    (  # musical instruments
        lazy_pattern(
            whole_words(r"piano guitar violin cello drums flute saxophone ukulele")
            + r"|钢琴|吉他|小提琴|大提琴|架子鼓|长笛|萨克斯|尤克里里|古筝|二胡",
            re.IGNORECASE,
        ),
        "instrument instruments hobby hobbies 乐器 爱好",
    ),
    (  # other pastimes, and taking one up ("I took up pottery on Saturdays" for "What are my hobbies these days?")
        lazy_pattern(
            whole_words(
                r"painting photography knitting chess gardening fishing pottery ceramics baking woodworking sketching"
                r" calligraphy crochet (?:took|take|takes|taking|taken)\s+up"
            )
            + r"|画画|摄影|书法|钓鱼|下棋|围棋|陶艺|烘焙|插花|编织|练字|迷上了",
            re.IGNORECASE,
        ),
        "hobby hobbies 爱好",
    ),
    (  # a favourite: "我现在最喜欢吃什么？" and "最近最爱吃的是日料" share 最 alone; "what's my fav food"
        lazy_pattern(r"\bfavou?rites?\b|\bfav\b|\bgo-to\b|最喜欢|最爱|最喜爱|最常去|最常吃", re.IGNORECASE),
        "favorite favourite fav 最喜欢 最爱",
    ),
    (  # a favourite food, in the other language's words too: "My favourite food is 火锅" (2022) stayed above
        # "我最喜欢的食物现在是laksa" (2025) for "What is my favourite food?", matched for other reasons (food, 食物)
        lazy_pattern(
            r"\b(?:favou?rite|fav|go-to)\s+(?:foods?|dish(?:es)?|meals?|cuisines?|snacks?)\b"
            r"|最(?:喜欢|爱|喜爱)(?:吃|的(?:食物|菜|美食|料理|小吃))",
            re.IGNORECASE,
        ),
        "food dish meal 食物 菜 吃",
    ),
    (  # one's partner in the words a statement uses ("Got engaged to Ana", "I've been seeing Ana"), not someone
        # else's ("My brother Feng married Julia", "我哥的老婆"): "Who is my partner?" found nothing
        lazy_pattern(
            whole_words(r"boyfriends? girlfriends? bf gf fianc[ée]e? engaged dating")
            + r"|\bseeing\s+(?-i:[A-Z])[a-z]+|\bmy\s+(?:husband|wife|spouse)\b|\bmet\s+someone\b"
            # one's own wedding: "Hannah and I got married!" answered "Who is my partner?" with nothing (a trial)
            r"|\b(?:i|we)\b[^.!?]{0,40}?\bgot\s+married\b|^\s*(?:just\s+)?married\s*!|我们(?:结婚|领证)了|(?:和|跟)我(?:结婚|领证)了"
            r"|(?:跟|向)我求婚|办完(?:了)?婚礼|婚礼办完|\bI\s+asked\s+(?-i:[A-Z])\w*\s+to\s+marry\s+me\b|\bmarried\s*!"
            # a date said as one ("Dinner with 李静 again, third date" answers "Am I seeing anyone?")
            r"|\b(?:first|second|third|fourth|fifth|\d+(?:st|nd|rd|th))\s+date\b|\b(?:on|for)\s+a\s+date\b|约会"
            # together as a couple: "和程凯在一起三个月了" (not "和同事在一起吃饭")
            r"|(?:和|跟)[^，。！？,.!?\s]{1,6}在一起(?!吃|玩|工作|上班|学习|开会|喝|聊|看|逛)"
            r"|(?<![的哥姐弟妹爸妈])(?:男朋友|女朋友|男友|女友|未婚夫|未婚妻|老公|老婆|对象|订婚|求婚|恋爱|交往)",
            re.IGNORECASE,
        ),
        _PARTNER_WORDS,
    ),
    (  # where someone comes from
        lazy_pattern(
            r"\bgrew\s+up\s+in\b|\bhometown\b|\b(?:i'?m|i\s+am|we'?re)\s+(?:originally\s+)?from\b"
            r"|\bborn\s+(?:and\s+raised\s+)?in\b|老家|家乡|出生在|出生于|在[^，。！？,.!?\s]{1,8}?长大",
            re.IGNORECASE,
        ),
        "hometown grow grew up from born 老家 家乡",
    ),
    # What one says of oneself in a word a question in the other language does not share: "When's my birthday?" and
    # "我生日是1994年4月17号" met on nothing (the bundled embedder puts them apart when many memories are stored).
    (lazy_pattern(r"\bbirthdays?\b|\bborn\s+on\b|生日|出生日期", re.IGNORECASE), "birthday 生日"),
    (  # a number, not a phone ("I use a Pixel phone")
        lazy_pattern(
            r"(?:\b(?:phone|mobile|cell|number)\b|手机|电话|号码)[^。.!?！？\n]{0,30}?\+?\d[\d\s-]{6,}", re.IGNORECASE
        ),
        "phone number mobile 手机 电话 手机号",
    ),
    (lazy_pattern(r"\be-?mail\b|邮箱|电邮", re.IGNORECASE), "email 邮箱"),
    (
        lazy_pattern(
            whole_words(
                r"university universities college graduated alma\s+mater bachelor'?s? master'?s? phd grad\s+school"
            )
            # a degree, not a temperature ("30 degrees today"); studies named by where or in what ("I studied at MIT",
            # "majored in CS", "今年在上海读研究生": "What did I study?" found nothing; a user trial)
            + r"|\b(?:a|an|my|her|his|their|the|\w+'s)\s+degree\b|\bdegree\s+in\b|\b(?:studied|studying)\s+(?:at|in)\b"
            r"|\bmajor(?:ed|ing)\s+in\b|大学|学院|毕业|本科|硕士|博士|研究生|读研|读博|留学",
            re.IGNORECASE,
        ),
        "university college school degree study 大学 学校 毕业 学习 专业",
    ),
    (  # a child's school or kindergarten: "What school does my daughter go to?" shares no word with
        # "朵朵上小学了，学校是莘庄实验小学" nor with the kindergarten it replaced (a user trial)
        lazy_pattern(
            whole_words(r"kindergarten preschool nursery\s+school (?:primary|elementary|middle|high)\s+school")
            + r"|幼儿园|托儿所|小学|初中|高中|中学|上学|读书|学校",
            re.IGNORECASE,
        ),
        "school 学校 上学",
    ),
    (
        lazy_pattern(r"\b(?:job\s+)?title\b|\bpromoted\b|\bposition\b|职位|头衔|职称|升职|晋升", re.IGNORECASE),
        "title position 职位 头衔",
    ),
    (  # an address said or written as one: "Keys collected: 7 Cotton Loom Street, apartment 31", "No. 88 Shizheng
        # Road" (a held-out trial: "What's my address?" and the homes said so shared no word)
        lazy_pattern(
            r"\b(?:home\s+)?address\b|地址|住址"
            r"|(?-i:\b(?:No\.\s*)?\d{1,5}[A-Za-z]?,?\s+(?:[A-Z][a-z]+\s+){1,3}"
            r"(?:Street|St|Road|Rd|Avenue|Ave|Lane|Ln|Drive|Dr|Grove|Wynd|Close|Crescent|Place|Way|Court|Terrace"
            r"|Boulevard|Blvd|Square|Row|Gardens|Mews|Rue|Straat|Laan|Gracht|Weg)\b)"
            r"|(?-i:\b[A-Z][a-z]+(?:straat|weg|laan|gracht|strasse|straße|gasse|vej|gatan)\s+\d+)"  # Vijverhofstraat 41
            # a German street named whole: "Osterstraße", "in der Karl-Heine-Straße" (a held-out trial)
            r"|(?-i:\b[A-Z][\w-]*(?:straße|strasse|-Straße|-Allee|-Platz|-Gasse|-Ring|-Weg)\b)"
            r"|\d+号楼|\d+栋|\d+单元|\d{3,4}室|[路街道巷]\d+号",  # "松岭路听涛苑2号楼801"
            re.IGNORECASE,
        ),
        "address 地址 住址",
    ),
    (  # whom one reports to: "so I report to the CEO, Sarah Kim" answers "Who is my manager?" (0.09, cut; a trial)
        lazy_pattern(
            r"\breport(?:s|ed|ing)?\s+(?:directly\s+)?to\s+(?!work\b|duty\b|the\s+(?:office|police|hr)\b)"
            r"|\bmy\s+(?:new\s+)?(?:boss|manager|supervisor)\b|(?:向|给)[^，。！？,.!?\s]{1,10}汇报|汇报给"
            r"|我(?:的)?(?:新)?(?:老板|领导|上司|主管)(?:是|叫)|(?:新)?(?:主管|经理)(?:是|叫)",
            re.IGNORECASE,
        ),
        # 主管, Taiwan's and many firms' word: "我現在的主管是誰？" matched nothing (a held-out trial)
        "boss manager supervisor 老板 领导 上司 主管",
    ),
    (  # what one earns: "How much do I make now?" found neither "pay bumped to 210k" nor "265k base"
        lazy_pattern(
            r"\bsalary\b|\bpay\s+(?:bumped|went\s+up|raise|rise|cut)\b|\bbase\s+(?:salary|pay)\b|\btotal\s+comp\b"
            r"|\b\d+(?:\.\d+)?k\s+(?:base|salary|a\s+year|per\s+year|/\s?yr|total)\b|\bearn(?:s|ed|ing)?\s+\$?\d"
            # a sum said as pay: "head of planning, £88k", "raise to €74k" (not "£45 a month" for a gym)
            r"|[£€$]\s?\d{2,3}(?:[.,]\d)?\s?k\b|\bNT\$\s?\d+(?:\.\d+)?\s?(?:M|k)\b|\braise\s+to\b"
            r"|月薪|年薪|工资|薪水|薪资|涨薪|加薪|降薪|税前",
            re.IGNORECASE,
        ),
        "salary pay income 工资 薪水 收入",
    ),
    (  # a medicine taken: "我吃什么药？" shares no word with "医生把二甲双胍加到 850mg 了", nor "What medication am I
        # on?" with "I take amlodipine 5mg" (user trials); a dose names one, and common medicines do by their names
        lazy_pattern(
            r"\b\d+(?:\.\d+)?\s*(?:mg|mcg|µg|μg|iu)\b|\d\s*(?:毫克|微克)"
            + r"|"
            + whole_words(
                r"medications? medicines? prescriptions? prescribed pills? dose dosage amlodipine metformin"
                r" insulin lisinopril losartan atorvastatin simvastatin statins? levothyroxine omeprazole ibuprofen"
                r" paracetamol acetaminophen aspirin amoxicillin antibiotics? prednisone sertraline fluoxetine"
                r" escitalopram warfarin gabapentin melatonin inhalers? valsartan nifedipine albuterol salbutamol"
                r" budesonide loratadine cetirizine oseltamivir"
            )
            + r"|(?<![火炸农])药(?![店房剂学妆])|处方|剂量|二甲双胍|胰岛素|氨氯地平|他汀|优甲乐|左甲状腺素|阿司匹林"
            r"|布洛芬|对乙酰氨基酚|阿莫西林|头孢|奥美拉唑|激素|褪黑素"
            # "我吃什么药？" of "随身带着沙丁胺醇喷雾" (an asthma inhaler; a user trial)
            r"|缬沙坦|硝苯地平|沙丁胺醇|布地奈德|氯雷他定|西替利嗪|奥司他韦|吸入剂",
            re.IGNORECASE,
        ),
        "medication medicine dose 药 药物 剂量",
    ),
    (  # what a home costs: "How much is my rent?" shares no word with "搬家了，房租降到 6800" (a user trial)
        lazy_pattern(  # the rent paid, not a car rented
            r"\b(?:my|our|the|monthly|pay|paid|paying)\s+rent\b|\brent\s+(?:is|was|went|goes|of|for|increase|rise|hike)\b"
            r"|\brent(?:ed|ing)\s+(?:a|an|the)\s+(?:place|flat|apartment|house|room|studio)\b|\bmortgage\b"
            r"|房租|租金|月租|房贷",
            re.IGNORECASE,
        ),
        "rent mortgage 房租 房贷",
    ),
    (  # no meat: "2024年我吃素吗？" and "I've been cooking vegetarian" met on nothing
        lazy_pattern(r"\b(?:vegetarian|vegan|veggie)s?\b|吃素|素食|全素|纯素", re.IGNORECASE),
        "vegetarian 吃素",
    ),
    (  # what someone eats or does not
        lazy_pattern(
            whole_words(
                r"vegetarian vegan pescatarian pescetarian keto gluten lactose halal kosher shellfish"
                r" (?:can'?t|cannot|don'?t|doesn'?t|never)\s+eat no\s+(?:meat|pork|beef|dairy)"
            )
            + r"|素食|吃素|全素|纯素|不吃|不能吃|忌口|清真|戒糖|生酮|乳糖不耐|不能喝牛奶",
            re.IGNORECASE,
        ),
        "diet dietary 饮食 忌口",
    ),
    # Travel and appointments by their words in the other language: "订了哪个航班？" and "Booked flight MU523 from
    # Shanghai to Tokyo" share no word, and their meaning alone fell under the cross-script floor (a user trial)
    (
        lazy_pattern(
            whole_words(r"flights? airlines? boarding\s+pass(?:es)?") + r"|航班|机票|登机|飞机票", re.IGNORECASE
        ),
        "flight flights 航班 机票",
    ),
    (
        lazy_pattern(whole_words(r"hotels? hostels? motels? airbnb") + r"|酒店|宾馆|旅馆|民宿", re.IGNORECASE),
        "hotel hotels 酒店",  # not 住宿: a hotel stay is no home ("住")
    ),
    (lazy_pattern(whole_words(r"appointments?") + r"|预约|挂号", re.IGNORECASE), "appointment appointments 预约"),
    (  # programming languages: "What programming language do I use?" found nothing for "在深圳腾讯做 backend，主要写
        # Go" (a user trial). Words with another sense only after a cue to code in them ("写 Go", "in Rust"), and
        # names that are people's names too (Ruby, Swift) not at all.
        lazy_pattern(
            r"(?-i:\b(?:Python|JavaScript|TypeScript|Java(?!Script)|Kotlin|Golang|Scala|Haskell|PHP|C\+\+|C#)(?![\w+#]))"
            r"|(?:写|用|学|[和、/]|\b(?:in|with|write|writes|writing|wrote|code|coding|and|or))\s*(?-i:(?:Go|Rust)\b)",
            re.IGNORECASE,
        ),
        "programming language languages code 编程 语言",
    ),
    (  # days of the week something recurs on: "Which nights can I cook?" shares only "cook" with "Yes, I can cook
        # Thursday to Sunday now", so "User might cook four nights a week" answered for more reasons (a user trial)
        lazy_pattern(
            rf"\b(?:{_WEEKDAY}days\b|every\s+{_WEEKDAY}day\b|{_WEEKDAY}day\s*(?:to|through|thru|until|-|–)\s*{_WEEKDAY}day\b)"
            r"|每(?:个)?(?:周|星期|礼拜)[一二三四五六日天]|(?:周|星期|礼拜)[一二三四五六日天]\s*(?:到|至|-|~)\s*(?:周|星期|礼拜)?[一二三四五六日天]",
            re.IGNORECASE,
        ),
        "days nights schedule 周几 星期几",
    ),
)


@lru_cache(maxsize=1)
def english_vocabulary() -> frozenset[str]:
    """The English words the categories and relations are asked with ("sister", "address", "hobby"): a query word one
    edit from one of them is read as it even where no memory says it in English (read/spelling.py)."""
    said = " ".join([*(words for _, words in _CATEGORIES), *(english for *_, english, _ in RELATIONS)])
    return frozenset(_LATIN.findall(said))


@lru_cache(maxsize=1)
def category_vocabulary() -> frozenset[str]:
    """Every word the categories add to the statements naming their instances, in both languages."""
    return frozenset(word for _, words in _CATEGORIES for word in words.split())


@lru_cache(maxsize=65_536)
def kinds_named(text: str) -> frozenset[str]:
    """The categories ``text`` names an instance of, each as its words."""
    return frozenset(words for pattern, words in _CATEGORIES if pattern.search(text))


@lru_cache(maxsize=4096)
def instances_named(text: str) -> tuple[tuple[str, str], ...]:
    """Each instance of a category ``text`` names, as it is written there, with its category's words: "How much
    metformin do I take?" names ("metformin", "medication medicine dose 药 药物 剂量")."""
    return tuple(
        (found.group(0), words) for pattern, words in _CATEGORIES for found in pattern.finditer(text) if found.group(0)
    )


def category_words(text: str) -> str:
    """The words of each category ``text`` names an instance of, and in a text of both languages, of each relative it
    names in the other one; or ""."""
    words = [words for pattern, words in _CATEGORIES if pattern.search(text)]
    if _SOMEONE_ELSES.match(text):  # "我姐订婚了！未婚夫是个消防员": her partner, not the user's
        words = [found for found in words if found != _PARTNER_WORDS]
    if not (_HAN.search(text) and _LATIN.search(text)):
        return " ".join(words)
    return " ".join(filter(None, [*words, relatives_in_other_script(text)]))
