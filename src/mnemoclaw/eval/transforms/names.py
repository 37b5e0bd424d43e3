"""Names spelled another way, and names nobody in memory has. Pure.

A person writes a name the way they heard it: Mohammed for the notes' Muhhamed, Akib for
Aqib, Nikolas for Nicolas, 章伟 for 张伟. ``latin_variants`` lists a Latin name's
transliteration-style spellings (ph/f, c/k, ck/k, q/k, a letter doubled or not, ie/y/i, ou/u,
the last vowel changed, an h after a consonant added or dropped, a vowel swapped as in
Muhammad/Mohammed, s/z, v/w, x/ks) and ``typos`` its one-edit misspellings; ``han_variants`` a
Chinese name's spellings with one character swapped for another of the same sound (tone
included) from ``SAME_SOUND``. ``respell`` picks one that no corpus word is, the same one
for a name every time (the choice is seeded by the name).

``stranger`` makes a plausible name of the same script that occurs nowhere in memory: a
question about that person is one memory cannot answer.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable

Taken = Callable[[str], bool]  # does a corpus hold this (a Latin word lowercased, or Han text)?

# (pattern, replacement) on the lowercased name; each applied at one place at a time
_LATIN_RULES: tuple[tuple[str, str], ...] = (
    ("ph", "f"), ("f", "ph"), ("ck", "k"), ("ck", "c"), (r"c(?=[aou]|$)", "k"), (r"k(?=[aou]|$)", "c"),
    (r"q(?!u)", "k"), ("qu", "kw"),
    (r"([bcdfgklmnprstz])\1", r"\1"), (r"(?<=[aeiou])([bdfgklmnprst])(?=[aeiou])", r"\1\1"),
    ("ie", "y"), ("ie", "i"), (r"y(?=$|[^aeiou])", "ie"), (r"(?<=[^aeiou])y(?=[^aeiou])", "i"),
    (r"(?<=.)y", "i"), (r"(?<=[^aeiou])i(?=[^aeiou])", "y"), ("ou", "u"), (r"(?<!o)u", "ou"),
    (r"e$", "a"), (r"a$", "e"), (r"a$", "ah"), (r"ah$", "a"), (r"ine$", "yn"),
    (r"(?<=[tdgk])(?=[aeiou])", "h"), (r"(?<=[bcdgkprt])h", ""), (r"(?<=[aeiou])h(?=[^aeiou])", ""),
    (r"(?<=.)a(?=.)", "e"), (r"(?<=.)e(?=.)", "a"), (r"(?<=.)o(?=.)", "u"), (r"(?<=.)u(?=.)", "o"),
    (r"(?<=.)e(?=.)", "i"), (r"(?<=.)i(?=.)", "e"),
    (r"(?<=[aeiou])s(?=[aeiou])", "z"), (r"z", "s"), ("v", "w"), ("w", "v"), ("x", "ks"), ("ks", "x"),
)
_VOWELS = "aeiou"
# Chinese characters read alike (the same syllable and tone) as names and transliterations use them
SAME_SOUND = (
    "张章 李理里礼 刘留流 陈晨辰 杨扬阳 黄皇煌 赵照兆 吴无吾 周州洲 林琳霖 明铭鸣 华骅 伟玮炜 丽莉俪利力 芳方 "
    "军君钧 杰洁捷 强蔷 磊蕾 涛滔 斌彬 鹏朋彭蓬 静靖婧 敏闽 婷亭庭 红宏鸿 辉晖徽 燕艳雁 玲铃灵 建健剑 国帼 "
    "文雯闻 晓小筱 志智致 英瑛莺 梅玫 萍平苹 勇永咏 鑫欣馨 宇雨羽 浩昊皓 博柏伯 佳嘉家加 娜纳 莎沙纱 斯丝思 "
    "克客刻 尔耳洱 德得 罗萝螺 马玛码 亚娅 卡咔 维唯惟韦 顿盾 布步 泰太态 迪笛狄 菲非飞 蒙盟 托拖 奥澳傲 "
    "汉翰瀚 尼霓 安桉 艾爱 伊依衣 格革阁 卢芦庐 兰蓝岚 露鹿路陆 丹单 凯恺铠 瑞睿锐 梁良 郑正政 韩寒涵 唐堂棠 "
    "冯逢 于余鱼 董懂 萧肖 程成承 袁元源 许栩 傅付富 曾增 吕旅侣 苏酥 蒋奖 蔡菜 贾甲 丁叮 魏卫未 薛靴 叶业页 "
    "阎严颜 潘攀 杜度渡 戴代黛 夏厦 钟忠中 田甜填 姜江疆 范梵 姚瑶遥 谭谈坛 熊雄 金津今 郝好 崔催 康慷 毛茅矛 "
    "邱秋丘 秦琴勤 史始使 顾固故 侯喉 邵绍 孟梦 龙隆珑 钱乾前 尹隐饮 黎梨 易亦艺 常长尝 武五舞 乔桥侨 贺鹤赫 "
    "赖籁 龚宫公 莱来徕 曼蔓漫 姆母 弗福 塞赛 巴芭 普浦谱 多哆 西希茜 基积姬 吉佶 波玻 萨飒 贝蓓倍 琼穹 "
    "柯科珂 因音茵 芬分纷 逊迅讯 勒乐 达答 拉啦 沃握卧 夫肤敷 威微薇 廉连莲 琪琦奇"
).split()
_SOUND = {c: tuple(x for x in group if x != c) for group in SAME_SOUND for c in group}
# Chinese surnames that open a name the tagger finds (a 2-3 character name starting with one is a person's)
SURNAMES = frozenset("王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁"
                     "任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛阎段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃"
                     "武戴莫孔向汤常温康施文牛樊葛邢安齐易乔伍庞颜倪庄聂章鲁岳翟殷詹申欧耿关兰焦俞左柳甘祝包宁尚符舒"
                     "阮柯纪梅童凌毕单季裴霍涂成苗谷盛曲翁冉骆蓝路游辛靳管柴蒙鲍华喻祁蒲房滕屈饶解牟艾尤阳时穆农司卓"
                     "古吉缪简车项连芦麦褚娄窦戚岑景党宫费卜冷晏席卫米柏宗瞿桂全佟应臧闵苟邬边卞姬师和仇栾隋商刁沙荣"
                     "巫寇桑郎甄丛仲虞敖巩明佘池查麻苑迟邝")
# given names common enough that a capitalised one in a question is a person's (with a corpus's speakers)
GIVEN_NAMES = frozenset((
    "James John Robert Michael William David Richard Joseph Thomas Charles Christopher Daniel Matthew Anthony Mark "
    "Donald Steven Paul Andrew Joshua Kenneth Kevin Brian George Timothy Ronald Edward Jason Jeffrey Ryan Jacob "
    "Gary Nicholas Eric Jonathan Stephen Larry Justin Scott Brandon Benjamin Samuel Frank Gregory Raymond "
    "Alexander Patrick Jack Dennis Jerry Tyler Aaron Henry Peter Adam Nathan Zachary Walter Kyle Harold Carl "
    "Jeremy Keith Roger Gerald Ethan Arthur Terry Sean Lawrence Joe Noah Jesse Albert Bryan "
    "Billy Bruce Willie Dylan Alan Ralph Gabriel Roy Juan Wayne Eugene Logan Randy Louis Russell Vincent "
    "Philip Bobby Johnny Bradley Mary Patricia Jennifer Linda Elizabeth Barbara Susan Jessica Sarah Karen Nancy "
    "Lisa Margaret Betty Sandra Ashley Dorothy Kimberly Emily Donna Michelle Carol Amanda Melissa Deborah "
    "Stephanie Rebecca Laura Sharon Cynthia Kathleen Amy Shirley Angela Helen Anna Brenda Pamela Nicole Samantha "
    "Katherine Emma Ruth Christine Catherine Debra Rachel Carolyn Janet Maria Heather Diane Julie Joyce "
    "Kelly Christina Joan Evelyn Lauren Judith Olivia Frances Martha Cheryl Megan Andrea Hannah "
    "Jacqueline Ann Jean Alice Kathryn Gloria Teresa Doris Sara Janice Julia Marie Grace Judy Theresa "
    "Beverly Denise Marilyn Amber Danielle Abigail Brittany Rose Diana Natalie Sophia Alexis Lori Kayla Jane "
    "Caroline Melanie Jolene Joanna Audrey Gina Calvin Evan Nate Tim Sam Dave Jon Max Mel Deb Nicolas Nikola "
    "Mohammed Muhammad Ahmed Ali Omar Fatima Aisha Wei Li Ming Hiroshi Yuki Carlos Jose Luis Miguel Pedro Pablo "
    "Sofia Lucia Elena Marco Giovanni Francesco Pierre Jacques Marie Hans Klaus Ivan Dmitri Olga Natasha"
).split())
# plausible people for questions about someone memory does not hold (filtered against the corpora)
LATIN_GIVEN = ("Philippa Leopold Octavia Thaddeus Cordelia Ignatius Rosalind Percival Wilhelmina Barnaby Imogen "
               "Cornelius Henrietta Lysander Marisol Evander Ottilie Caspian Seraphina Quentin Beatrix Florian "
               "Delphine Ambrose Clementine Leander Ingrid Torsten Anneliese Evangeline Bartholomew Griselda "
               "Peregrine Araminta Fenwick Tamsin Lorcan Ysolde Radomir Saoirse Benedikt Marguerite Anselm").split()
LATIN_SURNAMES = ("Thistlewood Ravensworth Kowalczyk Marchetti Oyelaran Haverford Lindqvist Brightwater Calloway "
                  "Fairweather Abernathy Castellanos Pemberton Szymanski Okonkwo Vanterpool Achterberg Quillfeather "
                  "Mortensen Blackwood Delacourt Hargreaves Winterbourne Aldridge").split()
HAN_SURNAMES = "龚滕符缪濮阚蔺郗宓訾"
HAN_GIVEN = ("若溪 嘉逸 晓岚 子墨 雨桐 思远 一航 沐宸 语嫣 景行 "
             "书瑶 明轩 佳琪 浩然 诗涵 俊熙 梓萱 宇辰 安然 清越").split()
HAN_SYLLABLES = "瓦伦蒂娜奥斯卡尔维克托利亚诺贝塔赫茨莫"
# the characters transliterations are written with: a name of these only is a foreign one (查尔斯, 安纳)
TRANSLITERATION = frozenset("阿埃艾安奥巴拜班邦贝本比彼波伯博布查达戴丹道德迪蒂丁东杜顿多厄恩尔法范菲芬费弗福盖冈戈格"
                            "古哈海汉豪赫亨胡华怀惠霍基吉加贾杰金卡凯坎康科克肯库拉莱兰朗劳勒雷蕾黎里理利丽莉林琳卢鲁"
                            "路伦罗洛马玛迈麦曼梅门蒙米明莫姆穆纳娜乃南内尼妮涅宁纽努诺欧帕佩彭皮普齐奇恰乔切琼丘萨塞"
                            "桑森沙莎尚舍什史斯松苏索塔泰坦汤唐特滕提汀托瓦万威韦维温文沃乌西希锡夏谢辛休雅亚扬耶伊"
                            "因英尤于约赞泽扎詹朱兹祖佐夫娃契柯")


def _cased(variant: str, like: str) -> str:
    return variant[:1].upper() + variant[1:] if like[:1].isupper() else variant


def latin_variants(name: str) -> list[str]:
    """A Latin name's transliteration-style spellings, in rule order, each once (never the name)."""
    low = name.lower()
    out: dict[str, None] = {}
    for pattern, replacement in _LATIN_RULES:
        for m in re.finditer(pattern, low):
            variant = low[:m.start()] + m.expand(replacement) + low[m.end():]
            if variant != low and len(variant) >= 2:
                out[_cased(variant, name)] = None
    return list(out)


def typos(name: str) -> list[str]:
    """One edit of a Latin name past its first letter: a vowel changed, a letter dropped, doubled,
    or swapped with the next."""
    low = name.lower()
    out: dict[str, None] = {}
    for i in range(1, len(low)):
        if low[i] in _VOWELS:
            for v in _VOWELS:
                out[low[:i] + v + low[i + 1:]] = None
        out[low[:i] + low[i + 1:]] = None
        out[low[:i] + low[i] + low[i:]] = None
        if i + 1 < len(low):
            out[low[:i] + low[i + 1] + low[i] + low[i + 2:]] = None
    out.pop(low, None)
    return [_cased(v, name) for v in out if len(v) >= 2]


def han_variants(name: str) -> list[str]:
    """A Chinese name with one character swapped for one read the same (SAME_SOUND)."""
    return [name[:i] + other + name[i + 1:] for i, c in enumerate(name) for other in _SOUND.get(c, ())]


def respell(name: str, taken: Taken, seed: object = 0) -> tuple[str, str] | None:
    """``name`` spelled another way no corpus holds, and how: ("transliteration" | "typo" | "same sound",
    the variant). The same name gets the same variant for the same seed; None when nothing fits."""
    rng = random.Random(f"{seed}|{name}")
    if re.fullmatch(r"[A-Za-z]+", name):
        for kind, options in (("transliteration", latin_variants(name)), ("typo", typos(name))):
            free = [v for v in options if not taken(v.lower())]
            if free:
                return kind, rng.choice(free)
        return None
    free = [v for v in han_variants(name) if not taken(v)]
    return ("same sound", rng.choice(free)) if free else None


def stranger(like: str, taken: Taken, seed: object = 0) -> str | None:
    """A name in the script and shape of ``like`` (a given name, given and family name, a Chinese or a
    transliterated Chinese name) that no corpus holds; the same for the same ``like`` and seed."""
    rng = random.Random(f"{seed}|stranger|{like}")
    if re.fullmatch(r"[A-Za-z]+(?: [A-Za-z]+)*", like):
        parts = like.split()
        given = [g for g in LATIN_GIVEN if not taken(g.lower())]
        family = [f for f in LATIN_SURNAMES if not taken(f.lower())]
        if not given or len(parts) > 1 and not family:
            return None
        return " ".join([rng.choice(given)] + [rng.choice(family) for _ in parts[1:]])
    if "·" in like or like[:1] not in SURNAMES or all(c in TRANSLITERATION for c in like):
        parts = like.split("·")  # a transliterated name: 卡罗琳, 托马斯·戴维斯
        for _ in range(50):
            made = "·".join("".join(rng.sample(HAN_SYLLABLES, max(2, min(len(p), 4)))) for p in parts)
            if not taken(made) and all(not taken(p) for p in made.split("·")):
                return made
        return None
    for _ in range(50):
        made = rng.choice(HAN_SURNAMES) + rng.choice(HAN_GIVEN)[: max(1, len(like) - 1)]
        if not taken(made):
            return made
    return None
