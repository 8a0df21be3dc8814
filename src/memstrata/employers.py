"""How an employer joined is said: "joined SAP", "joined a fintech startup", "加入了腾讯", and not "joined Anna for
dinner" or "Joined Furnace Gym". Read by memstrata.answers, whose statements of a new job include these."""

from __future__ import annotations

# An employer joined, named as companies are and people are not: "I moved to Berlin and joined SAP" was a new home but
# no new job, so "Where do I work?" found only the job of two years before (a user trial). A name alone may be a
# person's ("joined Anna for dinner") or a club's ("Joined Furnace Gym"): a company is an acronym (SAP, IBM), a name
# with a capital inside (ByteDance, OpenAI) or a company's last word (Labs, GmbH), a well-known employer, a company
# by its kind ("a fintech startup"), or a name said with when it was joined ("joined Northwind last month").
_ORG_SUFFIX = (
    "Inc|Ltd|LLC|GmbH|AG|plc|Corp|Co|Labs?|Technologies|Tech|Systems|Software|Capital|Partners|Bank|Group|AI|Health"
    "|Analytics|Consulting|Solutions|Robotics|Motors|Pharma|Bio|Ventures|Media|Games|Networks|Security|Energy"
    "|Insurance|Logistics|Semiconductor|Airlines"
)
_KNOWN_EMPLOYERS = (
    "Google|Microsoft|Amazon|Apple|Meta|Netflix|Stripe|Spotify|Airbnb|Uber|Lyft|Tesla|Nvidia|Intel|Oracle|Salesforce"
    "|Adobe|Siemens|Bosch|Shopify|Deloitte|Accenture|McKinsey|Alibaba|Tencent|Huawei|Baidu|Xiaomi|Zalando|Grab"
    "|Shopee|Anthropic|Booking|Revolut|Klarna|Atlassian|Canva|Databricks|Snowflake|Cisco|Samsung|Sony|Toyota"
)
_NOT_AN_EMPLOYER = (
    r"(?![\w&.'-]*(?:\s+[\w&.'-]+){0,2}\s+(?:Gym|Club|Fitness|Leisure|Choir|Band|League|Society|Church)\b)"
)
_CAPITALISED = r"[A-Z][\w&.'-]*(?:\s+[A-Z][\w&.'-]*){0,2}"
_JOINED_WHEN = (
    r"\s+(?:last|this)\s+(?:week|month|year|spring|summer|autumn|fall|winter)\b|\s+\w+\s+(?:weeks?|months?|years?)\s+ago\b"
    r"|\s+in\s+(?:January|February|March|April|May|June|July|August|September|October|November|December|\d{4})\b"
    r"|\s+(?:full-time|recently|as\b)|['’]s\s+[\w-]+\s+team\b"
)
JOINED_EMPLOYER = (
    r"\bjoin(?:ed|ing)\s+(?:a|an|the)\s+(?:[\w-]+\s+){0,2}?(?:startup|start-up|company|firm|agency|consultancy|bank"
    r"|law\s+firm|nonprofit|non-profit)\b"
    rf"|(?-i:\b[Jj]oin(?:ed|ing)\s+{_NOT_AN_EMPLOYER}(?:[A-Z]{{2,}}[a-z]?\b|[A-Z][a-z]+[A-Z]\w*"
    rf"|{_CAPITALISED}\s+(?:{_ORG_SUFFIX})\b|(?:{_KNOWN_EMPLOYERS})\b|{_CAPITALISED}(?=(?i:{_JOINED_WHEN}))))"
)
