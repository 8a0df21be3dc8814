"""The words of the questions a statement answers beyond its own, indexed beside it: a statement of change ("I moved to
Shanghai", "我入职了一家新公司") with those of the state it led to, and where someone lives or works with the words
such a question asks in both languages. Read by the keyword index (memstrata.indexing) and by ranking (read/newer.py,
read/move_up.py, read/due_plans.py)."""

from __future__ import annotations

import re

from memstrata.employers import JOINED_EMPLOYER
from memstrata.han import simplified
from memstrata.modality import HEDGED, NOT_YET, clause_at, clauses
from memstrata.patterns import lazy_pattern
from memstrata.text_cache import text_cache

# Statements of a change that answer a question about the state the change led to, with the words such a question
# asks with: "I moved to Shanghai" is where the user lives now, "我入职了一家新公司" where they work. The statement
# shares no word with the question ("Where do I live now?"), so the older one that does ("I live in Beijing")
# answered instead. Indexed beside the statement (as ASKED_WITH is beside a key's value), both match the question's
# words and the later one comes first (read/newer.py). A person moves, named or left out as speakers do ("搬到深圳
# 南山区了", "Just relocated to Portland"); a meeting, a company or a sofa does not ("Team meeting moved to
# Thursday", "我们公司搬到深圳了", "我把沙发搬到客厅了"); and a plan or a maybe is no change yet (modality.py).
_PERSON = r"(?:\b(?:i|we|he|she|they|you|user|(?:my|user's)\s+\w+)(?:'ve|\s+have|\s+had)?|^|(?<=[.!?:]\s))"
_ADVERBS = r"(?:\s*\b(?:just|finally|recently|already|also|now)\b)*"
_PERSON_ZH = (
    r"(?:我|我们|咱们|用户|他|她|他们|她们|我家|全家|一家人|家人|爸妈|父母|[姐哥妹弟]{1,2}|朋友"
    r"|^|(?<=[，。！？；,.!?;]))"
)
# The user, said or left out, and no one else before the verb ("我和阿杰分手了", "跟男朋友分手了"; not "他们分手了").
# "我姐订婚了" is the sister's news, "闺蜜阿梨订婚了" a friend's: no relative or friend in between.
_OWN_ZH = (
    r"(?:我|我们|用户|^|(?<=[，。！？；,.!?;]))"
    r"(?:(?![他她哥姐弟妹爸妈]|闺蜜|朋友|同事|室友|同学|邻居)[^，。！？,.!?\s]){0,8}?"
)
# Where, after 在: a few characters, or a name in Latin letters between spaces ("在 Zalando 做 embedded engineer",
# "开始在 Google 做 PM"), which mixed text writes apart; not at home.
# "在 Singapore 的 Google 做 PM" (a user trial): a place, 的, then the company, each in Latin letters.
_LATIN_NAME = r"[A-Za-z][\w&.'-]*(?:\s+[A-Za-z][\w&.'-]*){0,3}\s*"
_WHERE_ZH = rf"\s*(?!家)(?:{_LATIN_NAME}(?:的\s*{_LATIN_NAME})?|[^，。！？,.!?\s]{{1,10}}?)"
# Not a person's own move: a place of work or business ("工作室搬到了良渚"), something carried, one not made
# ("不搬来杭州了", "没搬成"), nor one argued over ("又是因为谁搬去谁那边": a held-out trial read it as the user's home).
_NOT_PEOPLE_ZH = (
    r"公司|办公室|单位|会议|部门|团队|工厂|门店|学校|总部|工作室|实验室|诊所|医院|店"  # places
    r"|把|将|不|没(?!想)|别|谁|要不要|该不该"
)
_TRIP_ZH = r"过年|春节|探亲|度假|旅游|旅行|出差|放假|假期|暑假|寒假|几天|一趟|一周|两周|玩"
_CHANGE_ANSWERS = (
    (
        lazy_pattern(
            rf"{_PERSON}{_ADVERBS}\s*(?:moved|relocated)\s+(?:back\s+|over\s+|out\s+)?"
            # "I moved from Beijing to Shanghai": where from, then where to (a user trial found it unanswered)
            r"(?:from\s+[^.!?;,]{1,40}?\s+)?(?:to|into|in\s+with)\b"
            # "搬家前卖了吉他" says when, not that one moved
            rf"|{_PERSON_ZH}(?:(?!{_NOT_PEOPLE_ZH})[^，。！？,.!?\s]){{0,6}}?(?:搬|迁)(?:到|去|回|进|来|家(?![前时]|之前|的时候))"
            # home from abroad for good ("去年从美国回国了", "毕业后回国工作"), not for a holiday or a trip
            # ("春节回国了", "回国过年", "回国玩了两周")
            rf"|{_PERSON_ZH}(?:(?!{_TRIP_ZH})[^，。！？,.!?\s]){{0,8}}?回国(?:定居|发展|工作|生活|了(?!{_TRIP_ZH}))"
            r"|\ban?\s+(?:\w+\s+){1,2}?resident\b|\bsettled\s+in(?:to)?\b|安顿(?:好|下来)"
            # a new home said without "move": "Finally got the keys to our place", "新家终于装修好了"
            r"|\bgot\s+(?:the|our|my)\s+keys\b|\bour\s+new\s+(?:place|apartment|flat|house|home)\b"
            # "Keys to the Tanjong Pagar place today", "First night in the new flat in Kowloon", "西屯的新公寓第一晚"
            r"|(?:^\s*|\b(?:got|picked\s+up|collected|received)\s+(?:the\s+)?)keys\s+to\s+(?:the|our|my)\s+"
            r"(?:[\w-]+\s+){0,3}?(?:place|apartment|flat|house|home|condo)\b"
            r"|\bfirst\s+night\s+(?:in|at)\s+(?:the|our|my)\s+new\b|\bmoved\s+in\s+(?:today|yesterday|last)\b"
            # "First proper night at 5 Marchfield Wynd", "Signed the lease today", "Keys collected: 7 Cotton Loom St"
            r"|\bfirst\s+(?:proper\s+)?night\s+(?:in|at)\s+(?:no\.\s*)?\d|\bfirst\s+proper\s+night\b"
            r"|\bsigned\s+(?:the|a|our|my)\s+(?:new\s+)?(?:lease|rental\s+agreement|tenancy)\b"
            r"|\bkeys\s+(?:collected|picked\s+up|in\s+hand)\b"
            r"|新家|新公寓|新住处|新房子?(?:的)?钥匙|拿到(?:了)?钥匙|钥匙拿到(?:了)?"  # "湖东那套两居室的钥匙拿到了"
            r"|\bunpacked\s+(?:the\s+)?(?:last\s+|final\s+)?box(?:es)?\b",  # "Unpacked the last box in Denver"
            re.IGNORECASE,
        ),
        "live 住 move 搬",  # where one lives now, and where one moved ("上个月我搬去哪了？" of "Moved to Singapore")
    ),
    (
        lazy_pattern(
            r"\b(?:start(?:ed|ing)?\s+(?:a\s+new\s+job|my\s+new\s+job|working\s+(?:at|for))|new\s+job"
            r"|got\s+a\s+job|(?:was|got|been|am|is)\s+hired|switched\s+jobs?|changed\s+jobs?)\b"
            r"|(?-i:\b[Ss]tart(?:s|ed|ing)?\s+(?:at|with)\s+[A-Z])"  # "Started at Loomly today", not "started at 9"
            r"|(?-i:\b(?:[Qq]uit|[Qq]uitting)\s+[A-Z][a-z])"  # "I quit Alibaba last week"
            r"|\bjoin(?:ed|ing)\s+[^.!?]{1,40}?\bas\s+(?:(?:a|an|the|their|its)\b|(?-i:[A-Z]))|\btransferred\s+to\b"
            rf"|{JOINED_EMPLOYER}"
            r"|\b(?:first\s+(?:day|week)|day\s+(?:1|one))\s+at\s+(?-i:[A-Z])"  # "day 1 at Cascadia", not school
            # a role begun or an offer taken: "starting May 5 as a staff engineer", "accepted the offer from Stripe"
            r"|\bstart(?:s|ing)\s+[^.!?;,]{0,24}?\bas\s+(?:an?|the|our|their)\s+\w"
            r"|\b(?:accepted|took|signed)\s+(?:an?|the|their|that)\s+(?:job\s+)?offer\b|接受了?[^，。！？,.!?]{0,12}?offer"
            r"|入职|跳槽|加入了?(?:[^，。！？,.!?\s]{0,8}?(?:公司|集团|科技|银行|律所|事务所|研究院)|腾讯|阿里|字节|华为|百度|美团"
            r"|京东|小米|网易|拼多多|滴滴|快手|蚂蚁)|换了?工作|换到[^，。！？,.!?\s]{1,12}?(?:工作|上班)|换到了?一家|新工作|调岗|调职"
            r"|第一天(?:去|在|到)[^，。！？,.!?]{1,12}?上班"  # "第一天去海澄生物上班"
            r"|找(?:了|到了?)(?:个|一份)[^，。！？,.!?]{0,20}?工作"  # "找了个nurse practitioner的工作"
            rf"|开始在{_WHERE_ZH}(?:做|上班|工作|实习)"
            # going to a company in a role: "下个月我去一家创业公司星河科技当技术负责人"
            r"|(?<!每天)(?<!天天)(?<!平时)(?:去|到)[^，。！？,.!?]{1,12}?(?:公司|集团|工作室|银行|医院|学校)"
            r"[^，。！？,.!?]{0,24}?(?:当|做|上班|工作|任职)"
            # a place or an employer gone to for work, not the daily trip ("下个月去深圳的华为上班", "去北京工作";
            # not "每天去公司上班", "我去上班了"): the plan of a new job was found for no job question (a user trial)
            r"|(?<!每天)(?<!天天)(?<!平时)(?:去|到)(?!公司|单位|办公室|学校|医院)[^，。！？,.!?\s]{1,12}?(?:上班|工作|任职)(?!一天|半天|几天)"
            # a job left or a business of one's own: the old employer no longer answers "我现在做什么工作？"
            r"|(?<![没未不])(?:辞职了|离职了|被裁了?)|创业了|开了一家[^，。！？,.!?\s]{0,10}?公司"
            r"|\b(?:quit|left)\s+(?:my|the|his|her)\s+job\b|\bresigned\b|\b(?:was|got|been)\s+laid\s+off\b"
            r"|\bstarted\s+(?:my|our|his|her)\s+own\s+(?:company|business|startup)\b"
            # "technically a Stripe employee now", "Officially a Google employee!"
            r"|(?-i:\b(?:[Oo]fficially|[Tt]echnically)\s+an?\s+[A-Z][\w&.-]*\s+employee\b|\ban?\s+[A-Z][\w&.-]*\s+employee"
            r"\s+now\b)",
            re.IGNORECASE,
        ),
        "work job 工作 上班",
    ),
    (  # the user's own relationship ended: whether they have a partner ("Anna and I broke up", "我和阿杰分手了")
        lazy_pattern(
            rf"\b(?:i|we|user)\b[^.!?]{{0,40}}?\b(?:broke\s+up|split\s+up)\b|{_OWN_ZH}(?:分手|分开了)", re.IGNORECASE
        ),
        "boyfriend girlfriend 男朋友 女朋友",
    ),
    (
        lazy_pattern(
            rf"\b(?:i|we|user)\b[^.!?]{{0,40}}?\b(?:got\s+)?divorced\b|{_OWN_ZH}(?:离婚|离了婚)", re.IGNORECASE
        ),
        "husband wife married 老公 老婆 结婚",
    ),
    (  # the user's own new partner: who they are with now ("认识了一个新男朋友，叫周航", "Met someone! Sofia")
        lazy_pattern(
            rf"{_OWN_ZH}(?:新(?:男|女)朋友|交了(?:一?个)?(?:男|女)朋友|脱单)"
            r"|\bnew\s+(?:boyfriend|girlfriend)\b|\bmet\s+someone\b|\bgot\s+a\s+(?:boyfriend|girlfriend)\b"
            r"|\b(?:i|we|user)\b[^.!?]{0,20}?\bstarted\s+(?:dating|seeing)\b"
            # going on for a while already: "I've been dating a guy named 陈宇 for a month" (a user trial)
            r"|\b(?:i|user)(?:'ve|\s+have|\s+has)\s+been\s+(?:dating|seeing)\s+(?!you\b)\w",
            re.IGNORECASE,
        ),
        "boyfriend girlfriend 男朋友 女朋友",
    ),
    (  # the user's own wedding or engagement: whom they are with
        lazy_pattern(
            rf"(?:\b(?:i|we|user)\b[^.!?]{{0,40}}?|^|(?<=[.!?]\s))\bgot\s+(?:married|engaged)\b"  # "Got engaged to Ana"
            # the news said first ("Married! Jing wore a qipao"), a proposal the user made ("I proposed to Jing")
            r"|(?:^|(?<=[.!?]\s))(?:just\s+|finally\s+)?(?:married|engaged)\s*!|\bI\s+proposed(?:\s+to)?\b|求婚成功"
            # a proposal to the user, one's own wedding said as held ("一舟…跟我求婚了！我答应了", "办完婚礼了",
            # "I asked Yvonne to marry me"; "Am I married?" found a friend's engagement first: a held-out trial)
            r"|(?:跟|向)我求婚|办完(?:了)?婚礼|婚礼办完|举行了婚礼|\bI\s+asked\s+(?-i:[A-Z])\w*\s+to\s+marry\s+me\b"
            rf"|{_OWN_ZH}(?:结婚了|领证了|订婚了)",
            re.IGNORECASE,
        ),
        "husband wife married 老公 老婆 结婚",
    ),
    (  # a favourite that changed: "最近最爱吃的是日料" after "我最喜欢吃火锅" for "我现在最喜欢吃什么？"
        lazy_pattern(
            r"(?:最近|现在|如今|这阵子|这段时间)[^，。！？,.!?]{0,6}?(?:最爱|最喜欢|最喜爱|最常去|最常吃)"
            r"|(?:最爱|最喜欢)[^，。！？,.!?]{0,10}?(?:变成|换成)了?"
            r"|\b(?:new|current)\s+favou?rite\b|\bfavou?rite\b[^.!?]{0,30}?\b(?:is\s+now|these\s+days|nowadays)\b"
            r"|\bnow\s+my\s+favou?rite\b",
            re.IGNORECASE,
        ),
        "favorite favourite 最喜欢 最爱",
    ),
    (  # a car of one's own, bought or picked up: the car the user drives now ("提了一辆比亚迪海豹", "Bought a car")
        lazy_pattern(
            r"\b(?:bought|got|picked\s+up|leased)\s+(?:a|an|my|our)\s+(?:new\s+|used\s+|second-?hand\s+)?(?:car|suv|ev)\b"
            r"|(?:提|买|换)了一?辆|提车了|买了新车|换了新车|新车到了"  # 辆 counts vehicles; 台 counts computers too
            r"|\b(?:bought|got|picked\s+up|leased)\s+(?:a|an|my|our)\s+(?:new\s+)?(?:理想\s?(?:L\d|MEGA|ONE)\b|问界|极氪|小米SU7"
            r"|tesla|byd|bmw|audi|toyota|honda|volvo|porsche)",  # "Bought a 理想L6", "Just got a Tesla"
            re.IGNORECASE,
        ),
        "car drive 车 开车",
    ),
    (  # a gym joined: where the user works out now ("Joined Leith Links Leisure for the pool" in 2026 stayed below
        # "Joined Furnace Gym in Ancoats" of 2021 for "Which gym do I go to?"; a held-out trial)
        lazy_pattern(
            r"\b(?:joined|signed\s+up\s+(?:at|with|for)|switched\s+to|moved\s+to)\s+(?:the\s+)?(?-i:[A-Z])"
            r"[\w&' -]{0,30}?\b(?:gym|fitness|leisure|athletic\s+club|sports?\s+(?:club|cent(?:re|er)))\b"
            r"|换了?(?:个|家)?健身房|办了[^，。！？,.!?]{0,12}?健身(?:房)?的?(?:年卡|月卡|会员)",
            re.IGNORECASE,
        ),
        "gym 健身房 健身",
    ),
    (  # a pet taken in: the pets the user has now ("We adopted a corgi puppy", "领养了一只橘猫")
        lazy_pattern(
            r"\badopted\b(?=[^.!?]{0,40}?\b(?:pupp(?:y|ies)|kittens?|dogs?|cats?|pets?|rabbits?|bunny|hamsters?"
            r"|parrots?|corgis?|retrievers?|poodles?|beagles?)\b)"  # a pet, not "adopted a new policy"
            r"|\bgot\s+(?:a|an|our|my)\s+(?:new\s+)?(?:puppy|kitten|dog|cat|pet)\b"
            r"|领养了|收养了|新养了|养了一只|抱回(?:来)?了?一只|接回家",
            re.IGNORECASE,
        ),
        "pet pets 宠物 养",
    ),
    (  # a new title: the user's position now ("Got promoted to Staff Data Engineer", "title 改成了数据平台总监")
        lazy_pattern(
            r"\b(?:got\s+|was\s+|been\s+)?promoted\s+to\b|\bnew\s+(?:job\s+)?title\b|\btitle\s+(?:is\s+)?now\b"
            # the news said first ("Promoted! I'm now VP of Product"); "I was promoted" says no title
            r"|(?:^|[.!?]\s*)promoted\s*!"
            r"|升职|晋升|升为|升任|(?:title|职位|头衔)[^，。！？,.!?]{0,12}?(?:改成|变成|换成)",
            re.IGNORECASE,
        ),
        "title position 职位 头衔",
    ),
    (  # a new manager: whom the user reports to now ("My new boss is Marta", "From next month I report directly to
        # the CTO", "新领导是王总", "换了个上司"); "I report to Sophie" alone is a state, said again or not
        lazy_pattern(
            r"\bnew\s+(?:boss|manager|supervisor|line\s+manager)\b"
            r"|\b(?:now|from\s+(?:now\s+on|next\s+\w+|today|monday)|starting\s+\w+)[^.!?]{0,20}?\breport(?:ing)?\s+"
            r"(?:directly\s+)?to\b|\b(?:will|'ll|now)\s+(?:be\s+)?report(?:ing)?\s+(?:directly\s+)?to\b"
            # "I report directly to the CTO now", "so I report to Dr. 周慧 (Zhou Hui) now"
            r"|\breport(?:ing)?\s+(?:directly\s+)?to\b(?:[^.!?]|(?<=Dr)\.|(?<=Mr)\.|(?<=Ms)\.|(?<=Mrs)\.|(?<=Prof)\.){1,40}?"
            r"\bnow\b"
            # the news said first, of a new job: "First week at Brackenridge. Reporting to Isla Murdoch, the COO"
            r"|(?:^|[.!?]\s*)(?:I'm\s+|now\s+)?reporting\s+(?:directly\s+)?to\b"
            r"|新(?:的)?(?:领导|老板|上司|经理|主管)|换了(?:个|新)?(?:领导|老板|上司|主管)"
            r"|改(?:成)?(?:向|给)[^，。！？,.!?\s]{1,10}汇报"
            r"|(?:现在|改成?|改为)[^，。！？,.!?]{0,6}?汇报给",  # "我现在直接汇报给 CTO 刘洋了"
            re.IGNORECASE,
        ),
        "boss manager supervisor 老板 领导 上司 主管",
    ),
    (  # a new number: the phone number now ("Number's 720-555-0172 now", "换了新手机号"), also in Taiwan's word (新手機
        # 門號) and as the old one's end ("HK number again: +852 … The Singapore one is cancelled", "舊的 0933 停了":
        # each ranked below the numbers it replaced; a held-out trial)
        lazy_pattern(
            r"\bnew\s+(?:\w+\s+)?(?:phone\s+|mobile\s+|cell\s+)?number\b|\bnumber\s+again\b"
            r"|\bnew\s+(?:\w+\s+)?(?:mobile|cell)\s*:"  # "New UK mobile: 07911 640233"
            r"|\bnumber(?:'s|\s+is)\s+(?:now\s+\+?\d[\d\s().-]{6,}|\+?\d[\d\s().-]{6,}\s*now\b)"
            r"|\b(?:old|the\s+\w+)\s+(?:one|number)\s+is\s+(?:cancell?ed|gone|dead|off|disconnected|stopped)\b"
            r"|换了?(?:个)?新?(?:手机|电话)?(?:门)?号(?:码)?|新(?:手机|电话)?(?:号码|门号)|(?:手机|电话)号(?:码)?(?:换|改)"
            r"|旧的?(?:号码?|门号|手机)?\s*[\d\s-]{0,14}(?:停了|停掉了|不用了)",
            re.IGNORECASE,
        ),
        "phone number mobile 手机 电话 手机号",
    ),
    (  # pay changed: what the user earns now ("pay bumped to 210k", "Promoted to Senior Staff, 265k base", "涨薪了")
        lazy_pattern(
            r"\bpay\s+(?:bumped|went\s+up|raised|rise)\b|\b(?:got|get)\s+a\s+(?:raise|pay\s+rise)\b|\braise\s+to\b"
            r"|\bpromoted\b[^.!?]{0,40}?\b\d+(?:\.\d+)?k\b|涨薪|加薪|调薪|(?:工资|月薪|年薪|薪水)[^，。！？,.!?]{0,6}?涨",
            re.IGNORECASE,
        ),
        "salary pay income 工资 薪水 收入",
    ),
    (  # a diet begun or left: what the user eats now ("back to eating chicken and fish", "又开始吃鱼了", "开始吃素")
        lazy_pattern(
            r"\bback\s+to\s+eating\b|\beating\s+(?:meat|fish|chicken|pork|beef)\s+again\b"
            r"|\b(?:went|gone|going|turned)\s+(?:fully\s+|full\s+|completely\s+|strictly\s+)?(?:vegetarian|vegan|pescatarian"
            r"|keto)\b"
            r"|\bno\s+longer\s+(?:strictly\s+)?(?:a\s+)?(?:veggie|vegetarian|vegan)\b"
            r"|\bnot\s+(?:strictly\s+)?(?:a\s+)?(?:veggie|vegetarian|vegan)\s+any\s?more\b"
            r"|又(?:开始)?吃(?:肉|鱼|荤)|开荤|不(?:再)?吃素了|开始吃素|改吃素|吃回(?:肉|荤)|(?:回到|改回|重新)(?:吃素|全素|素食)"
            r"|不(?:再)?吃(?:肉|鱼|荤)了",
            re.IGNORECASE,
        ),
        "diet dietary 饮食 忌口 vegetarian 吃素",
    ),
    (  # a habit given up answers whether the user still has it ("戒烟成功了", "I quit drinking")
        lazy_pattern(
            r"\b(?:quit|stopped|gave\s+up)\s+smoking\b|\bdon'?t\s+smoke\s+any\s?more\b|\bnon-?smoker\b"
            r"|\bdays?\s+without\s+a\s+cigarette\b|戒烟|不[抽吸]烟了",
            re.IGNORECASE,
        ),
        "smoke smoking quit 抽烟 吸烟 戒烟",
    ),
    (  # a dose changed: "医生把二甲双胍加到 850mg 了" replaces "每天吃二甲双胍 500mg" (a user trial)
        lazy_pattern(
            r"(?:加到|加量到|增加到|减到|减量到|减少到|改成|调到|换成)\s*\d+(?:\.\d+)?\s*(?:mg|毫克|微克|mcg)"
            r"|\b(?:increased|raised|upped|bumped|lowered|reduced|cut|changed|switched)\s+(?:\w+\s+){0,4}?to\s+\d+(?:\.\d+)?"
            r"\s*(?:mg|mcg)\b|\bdose\s+(?:is\s+now|went\s+up|went\s+down|was\s+(?:increased|raised|lowered|reduced))",
            re.IGNORECASE,
        ),
        "medication medicine dose 药 药物 剂量",
    ),
    (
        lazy_pattern(r"\b(?:quit|stopped|gave\s+up)\s+drinking\b|\bdon'?t\s+drink\s+any\s?more\b|戒酒|不喝酒了", re.I),
        "drink drinking alcohol quit 喝酒 戒酒",
    ),
)


# A piece of a word every statement of change holds: most texts have none, and search reads this of every candidate
# it ranks, so the full patterns (~120 µs on a long English turn) run only after this check (~2 µs).
_CHANGE_CUES = (
    *("mov", "reloc", "start", "job", "hired", "join", "transfer", "resident", "settled", "keys", "our new", "offer"),
    *("first night", "first proper night", "lease", "tenancy", "rental agreement", "新公寓", "新住处", "第一天"),
    *("mobile", "gym", "fitness", "leisure", "健身"),
    *("搬", "迁", "入职", "跳槽", "加入", "上班", "工作", "开始在", "换到", "调岗", "调职"),
    *("安顿", "新家", "钥匙", "回国", "cigarette"),
    *("first day", "first week", "day 1", "day one"),
    *("broke", "split", "divorc", "分手", "离婚", "离了婚", "smok", "drink", "烟", "酒"),
    *("新男朋", "新女朋", "交了", "脱单", "new boy", "new girl", "met someone", "got a", "dating", "seeing"),
    *("married", "engaged", "结婚", "领证", "订婚", "最爱", "最喜", "favo", "求婚", "婚礼", "marry"),
    *("辞职", "离职", "被裁", "创业", "开了一家", "quit", "left", "resigned", "laid off", "own "),
    *("bought", "picked up", "leased", "了一辆", "了辆", "了一台", "了台", "提车", "新车"),
    *("adopted", "got a", "got an"),
    *("领养", "收养", "新养", "养了一只", "抱回", "接回家", "promoted", "title"),
    *("升职", "晋升", "升为", "升任", "职位", "头衔"),
    *("new boss", "new manager", "new supervisor", "new line manager", "report", "新领导", "新老板", "新上司", "主管"),
    *("新的", "换了", "汇报", "unpack", "employee", "最常", "number", "号", "pay", "raise", "涨", "薪"),
    *("married", "engaged", "proposed", "求婚"),
    *("eating", "vegetarian", "vegan", "veggie", "pescatarian", "keto", "吃肉", "吃鱼", "吃荤", "开荤", "吃素", "吃回"),
    *("全素", "素食"),
    *("加到", "加量", "增加到", "减到", "减量", "减少到", "改成", "调到", "换成", "increased", "raised", "upped"),
    *("bumped", "lowered", "reduced", "cut", "changed", "switched", "dose"),
)


# Statements of where someone lives or works, with the words such a question asks in the other language too:
# "Where do I work?" shares no word with "我在网易做产品经理", and meaning alone across scripts left it out
# (relevance 0.002). Whoever the subject is ("我妹妹在阿里巴巴上班" answers "Where does my sister work?"); a
# maybe or a plan is not where anyone lives or works yet.
_STATE_ANSWERS = (
    (
        lazy_pattern(
            r"\bliv(?:e[sd]?|ing)\s+(?:in|at|near|on)\b|\bbased\s+in\b|住在|家在|定居|(?:房子|新家|公寓)(?:在|买在|租在)"
            r"|\brent(?:ing|s)?\s+(?:a\s+(?:place|flat|apartment|house|room)\s+)?in\b|在[^，。！？,.!?\s]{1,10}?租(?:房|了)"
            # "我在杭州住了三年了", "在北京朝阳区住，在字节跳动做前端" (a user trial), not a hotel stay
            r"|在(?!医院|酒店|宾馆|民宿)[^，。！？,.!?\s]{1,10}?住(?:了|过|(?=[，。！？；,.!?;]|$))",
            re.IGNORECASE,
        ),
        "live 住",
    ),
    (
        lazy_pattern(
            r"\bwork(?:s|ed|ing)?\s+(?:at|for|as)\b|\bemployed\s+(?:at|by)\b|\bjob\s+at\b"
            r"|\bpromoted\b[^.!?]{0,40}\bat\s+[A-Z]"  # "I got promoted to senior engineer at ByteDance"
            r"|(?-i:\b[A-Z][\w&.-]*\s+employee\b)"  # "a Stripe employee"
            # not what one is doing ("我最近在学做饭", "在忙着做PPT")
            rf"|上班|在(?!学(?!校)|忙|想|准备|考虑|努力){_WHERE_ZH}(?:工作|做|当|任职|实习|教|升职|晋升)",
            re.IGNORECASE,
        ),
        "work job 工作 上班",
    ),
    (
        # One's own name: "What's my name?" shares no word with "用户叫林小雨" (the write path's third person), and
        # "我叫什么名字？" none with "My name is Lin" but the name; a pet or a relative named is not the user's name
        # ("我养了一只猫叫团子"), nor a call made ("我叫了外卖", "我们叫它团子").
        lazy_pattern(
            r"(?:^|(?<=[\s，。！？；,.!?;:：]))(?:我|用户)(?:的(?:全名|名字|中文名|英文名|真名)(?:是|叫)|(?<!们)叫(?![了过着车外人醒它他她]))"
            r"|\b(?:my|user's|the\s+user's)\s+(?:full\s+|real\s+)?name\s+is\b|\b(?:i'm|i\s+am|user\s+is)\s+called\b"
            r"|\bcall\s+me\b"
            # a whole name said as who one is ("User is Daniel Wu": "What is my name?" found the sister's), or after a
            # greeting ("Hi, I'm Tom."); one capitalised word alone may be a nationality ("User is Canadian")
            r"|^\s*(?:the\s+)?user\s+is\s+(?-i:[A-Z][a-z]+(?:\s+[A-Z][a-z]+){1,2})\s*[.!]?\s*$"
            r"|^\s*(?:hi|hello|hey)\b[,!]?\s+(?:i'm|i\s+am|this\s+is)\s+(?-i:[A-Z][a-z]+)\b(?!\s+(?-i:[a-z]))",
            re.IGNORECASE,
        ),
        "name 名字",
    ),
)


@text_cache  # primed from the stored row (stored_words.py)
def change_answers(text: str) -> str:
    """The words of the questions a statement of change answers (see ``_CHANGE_ANSWERS``), or "". Traditional text is
    read as Simplified: "我媽搬來新加坡跟我們住" (來) was no move, so it was not held after the year asked about."""
    text = simplified(text)
    lowered = text.lower()
    if not any(cue in lowered for cue in _CHANGE_CUES):
        return ""
    return _answers_said_so(text, _CHANGE_ANSWERS)


# A move still to come, which _CHANGE_ANSWERS's "moved to" does not say: "I'm moving to Berlin in March".
# "My mom is moving in with us next month" too, as "moved in with" is a move said as done.
_PLANNED_MOVE = lazy_pattern(
    r"\b(?:moving|move|relocating|relocate)\s+(?:back\s+)?(?:from\s+[^.!?;,]{1,40}?\s+)?(?:to|into|in\s+with)\b",
    re.IGNORECASE,
)


@text_cache  # primed from the stored row (stored_words.py)
def planned_change_answers(text: str) -> str:
    """The words of the questions a plan of change will answer once done ("我下个月要搬到上海了", "I'm moving to
    Berlin in March": where the user lives), or "". A maybe is no plan ("We might move to Austin"), and what the text
    says as done has its words in :func:`change_answers` already."""
    text = simplified(text)
    lowered = text.lower()
    if not any(cue in lowered for cue in _CHANGE_CUES):
        return ""
    planned = []
    for pattern, words in ((_PLANNED_MOVE, "live 住"), *_CHANGE_ANSWERS):
        for found in pattern.finditer(text):
            clause = clause_at(text, found.start())
            if not HEDGED.search(clause) and (pattern is _PLANNED_MOVE or NOT_YET.search(clause)):
                planned.append(words)
                break
    done = change_answers(text).split()
    return " ".join(word for word in dict.fromkeys(" ".join(planned).split()) if word not in done)


# A birthday said as the age someone turns: "She turns 6 in July" answers "When is my daughter's birthday?", with no
# word in common (a user trial). Of anyone: whose birthday it is, the statement's other words say.
_TURNS_AN_AGE = lazy_pattern(
    r"\bturn(?:s|ing)?\s+\d{1,3}\b(?!\s*(?:%|percent|degrees|minutes|hours))|满\s*[\d一二三四五六七八九十]{1,3}\s*岁",
    re.I,
)


@text_cache  # primed from the stored row (stored_words.py)
def answer_words(text: str) -> str:
    """The words of the questions a statement answers beyond its own: those of a change (:func:`change_answers`)
    and of where someone lives or works (``_STATE_ANSWERS``), or "". A word the statement says already is
    not said again: "我住在北京" said "住" twice, and that outweighed "搬到深圳了" for "我住在哪？"."""
    # a change and a state at once: "I got promoted to senior engineer at ByteDance" is the title and the employer
    text = simplified(text)
    birthday = "birthday 生日" if _TURNS_AN_AGE.search(text) else ""
    words = f"{change_answers(text)} {_answers_said_so(text, _STATE_ANSWERS)} {birthday}"
    lowered = text.lower()
    return " ".join(dict.fromkeys(word for word in words.split() if word not in lowered))


# What is quoted is someone's words, not the speaker's state: "Leo 发朋友圈说“终于搬到大理了”" is Leo's move, and it
# answered "我现在住在哪里？" as the user's own move (a user trial). The index keeps what the quote answers: "Where does
# Karim live?" is answered by Karim's quoted "I finally moved to Dubai" (a held-out trial).
_QUOTED = lazy_pattern(r"“[^”]{0,200}”|「[^」]{0,200}」|『[^』]{0,200}』|\"[^\"]{0,200}\"")


def unquoted(text: str) -> str:
    """``text`` without what it quotes."""
    return _QUOTED.sub(" ", text) if _QUOTED.search(text) else text


# A later clause that turns to someone else by a pronoun: "Had dinner with Lily, she works at Alibaba" says where Lily
# works, and tied with the user's own job for "Where do I work?" (a user trial). A statement that opens with someone
# else keeps its words (read/whose.py reads it as theirs); one that opens with the speaker has only the words of
# the clauses about the speaker.
_TURNS_TO_ANOTHER = lazy_pattern(
    r"^\s*(?:(?:and|but|so|also|plus)\s+)?(?:he|she|they)\b|^\s*(?:而且|但是?|所以|另外|还有)?(?:他|她)(?!们家)"
    # or to someone named: "Yes, I can cook Thursday to Sunday now. Also Arjun got a job in Boston" gave the speaker a
    # new job, and it led "What shifts do I work?" (a user trial)
    r"|^\s*(?:(?:and|but|so|also|plus)\s+)?(?!(?:today|yesterday|tonight|finally|just|then|now|recently|officially"
    r"|actually|already|still|never|last|this|next)\b)(?-i:[A-Z][a-z]+)\s+(?:got|gets|started|starts|moved|moves|works|worked"
    r"|joined|left|quit|lives|found|is\s+(?:moving|starting|working))\b",
    re.I,
)


def _answers_said_so(text: str, table: tuple[tuple[re.Pattern[str], str], ...]) -> str:
    """The words of each pattern that matches in a clause saying it is so, not a maybe or a plan, and not a later
    clause about someone else."""
    first = next(iter(clauses(text)), "")
    return " ".join(words for pattern, words in table if _said_so_of_the_speaker(pattern, text, first))


def _said_so_of_the_speaker(pattern: re.Pattern[str], text: str, first: str) -> bool:
    for found in pattern.finditer(text):
        clause = clause_at(text, found.start())
        if NOT_YET.search(clause) or (clause != first and _TURNS_TO_ANOTHER.match(clause)):
            continue
        return True
    return False
