"""What relations mean: which are functional (one current value per subject), which are symmetric, and what
types their ends usually have. Relation names are identifiers (English snake_case) in every language; the
entity names they connect stay in the words the user said."""

from __future__ import annotations

# A subject has one current value of these at a time: a new value closes the old edge.
FUNCTIONAL = frozenset(
    {"lives_in", "works_at", "spouse_of", "reports_to", "located_in", "has_profession", "studies_at", "age"}
)

# Stored once, matched in either direction ("王总 spouse_of 李女士" is also "李女士 spouse_of 王总").
SYMMETRIC = frozenset({"spouse_of", "colleague_of", "friend_of", "sibling_of", "knows"})

# Usual types of (source, target) when the extractor gives none.
END_TYPES: dict[str, tuple[str | None, str | None]] = {
    "lives_in": (None, "location"),
    "born_in": ("person", "location"),
    "from": ("person", "location"),
    "works_at": ("person", "organization"),
    "works_in": ("person", "location"),  # "我在杭州工作": a place of work, not an employer (plan.py)
    "studies_at": ("person", "organization"),
    "spouse_of": ("person", "person"),
    "parent_of": ("person", "person"),
    "child_of": ("person", "person"),
    "sibling_of": ("person", "person"),
    "friend_of": ("person", "person"),
    "colleague_of": ("person", "person"),
    "reports_to": ("person", "person"),
    "has_profession": ("person", "profession"),
    "responsible_for": ("person", None),
    "located_in": (None, "location"),
    "has_pet": ("person", None),
}

# Free-text relation phrases a model may answer with, mapped onto the names above.
SYNONYMS = {
    "live_in": "lives_in",
    "resides_in": "lives_in",
    "moved_to": "lives_in",
    "work_at": "works_at",
    "works_for": "works_at",
    "employed_by": "works_at",
    "employee_of": "works_at",
    "married_to": "spouse_of",
    "wife_of": "spouse_of",
    "husband_of": "spouse_of",
    "spouse": "spouse_of",
    "wife": "spouse_of",
    "husband": "spouse_of",
    "like": "likes",
    "loves": "likes",
    "enjoys": "likes",
    "prefers": "likes",
    "depend_on": "depends_on",
    "depends": "depends_on",
    "requires": "depends_on",
    "owns": "responsible_for",
    "in_charge_of": "responsible_for",
    "responsible": "responsible_for",
    "manages": "responsible_for",
    "maintains": "responsible_for",
    "profession": "has_profession",
    "is_a": "has_profession",
    "job": "has_profession",
}


def canonical_relation(raw: str) -> str:
    """'Works For' / 'works-for' / 'WORKS_FOR' -> 'works_at'; unknown phrases become snake_case as they are."""
    words = "".join(ch if ch.isalnum() else " " for ch in raw.strip().lower()).split()
    name = "_".join(words)[:64] or "related_to"
    if not name[0].isalpha() or not name.isascii():
        return "related_to"
    return SYNONYMS.get(name, name)


# Words naming a relative or a close contact, by the relation they give (the patterns of graph/rules.py, and the
# possessive graph/names.py strips from "我妹妹" / "my sister").
FAMILY = {
    "spouse_of": "太太|妻子|老婆|夫人|爱人|丈夫|老公",
    "parent_of": "女儿|儿子|孩子",
    "child_of": "父亲|爸爸|母亲|妈妈",
    "sibling_of": "哥哥|姐姐|弟弟|妹妹",
    "reports_to": "老板|领导|上司|经理",
    "colleague_of": "同事",
    "friend_of": "(?<![男女])朋友",  # the 朋友 of 男朋友 / 女朋友 is a partner ("我男朋友" was read as a friend)
}
# Relatives named by one character after 我 ("我哥", "我妈"): alone, 哥 or 妈 is too often part of another word.
SHORT_KIN = "[哥姐弟妹爸妈]"
EN_FAMILY = {
    "spouse_of": "wife|husband|spouse|partner",
    "parent_of": "daughter|son|child|kid",
    "child_of": "father|mother|dad|mom|mum",
    "sibling_of": "brother|sister",
    "reports_to": "boss|manager",
    "colleague_of": "colleague|coworker",
    "friend_of": "friend",
}


# The words by which a question asks for a relation of the entity it names, by relation group. A question that says
# some of them asks for those relations; the memories the other edges bring in are off its topic ("我哥哥住在哪個
# 城市？" walked from 我哥 to "我哥 has_pet 金毛", and the dog, with no word of the question, came first).
ASKED_BY: tuple[tuple[frozenset[str], str], ...] = (
    (
        frozenset({"lives_in", "located_in", "from", "born_in", "works_in"}),
        r"\b(?:live[sd]?|living|city|cities|hometown|address|moved?)\b|住|城市|老家|家乡|搬家|搬到|地址",
    ),
    (
        frozenset({"works_at", "works_in", "has_profession", "reports_to", "colleague_of", "responsible_for"}),
        r"\b(?:work(?:s|ed|ing)?|jobs?|company|employer|title|profession|boss|colleagues?|coworkers?|do\s+for\s+a\s+living)\b"
        r"|工作|公司|上班|职位|职业|老板|同事|做什么的|干什么的",
    ),
    (frozenset({"studies_at"}), r"\b(?:stud(?:y|ies|ied)|school|university|college|major)\b|学校|大学|读书|专业|上学"),
    (
        frozenset({"spouse_of", "parent_of", "child_of", "sibling_of", "friend_of", "knows"}),
        r"\b(?:married|marry|wife|husband|partner|spouse|kids?|children|daughter|son|brother|sister|parents?|friends?)\b"
        r"|结婚|老婆|老公|妻子|丈夫|孩子|女儿|儿子|父母|朋友|嫂子|姐夫",
    ),
    (frozenset({"has_pet"}), r"\b(?:pets?|dogs?|cats?|puppy|kitten)\b|宠物|狗|猫|养"),
    (frozenset({"likes"}), r"\b(?:likes?|loves?|enjoys?|favou?rite|gifts?|presents?)\b|喜欢|爱好|最爱|爱吃|爱喝|礼物"),
)
