"""Sentences that answer no one's memory question: what "unrelated" scores under a model. Pure.

A query's best match in a small memory can look close by the index's own measure simply
because the memory holds little else. How the query scores against these sentences (about
rivers, recipes, football, planets, markets, in English and Chinese) says what unrelated
text scores for that query under the model in use, whatever the memory holds; a chunk
that does not beat them is unlikely to be about the query (search/relevance.py).
"""

from __future__ import annotations

SENTENCES = (
    "The river floods the lower fields every spring after the snow melts.",
    "Add the onions to the pan and stir until they turn golden.",
    "The striker scored twice in the second half of the match.",
    "Mount Kilimanjaro is the highest mountain in Africa.",
    "Light travels more slowly through water than through air.",
    "The treaty ended a war that had lasted nearly thirty years.",
    "She tuned the violin before the concert began.",
    "The new phone has a larger battery and a brighter screen.",
    "Interest rates rose for the third month in a row.",
    "Wolves hunt in packs and can travel long distances in one night.",
    "The museum reopened after a two-year renovation.",
    "Water boils at a lower temperature high in the mountains.",
    "The train to the coast leaves every hour from platform four.",
    "He planted tomatoes and basil along the garden fence.",
    "The novel follows three generations of a fishing family.",
    "Regular exercise lowers the risk of heart disease.",
    "The election results will be announced on Sunday evening.",
    "Bees communicate the location of flowers with a dance.",
    "The bridge was closed for repairs after the storm.",
    "A compiler translates source code into machine instructions.",
    "The painter used thick layers of blue and yellow.",
    "Coffee prices climbed after a poor harvest in Brazil.",
    "The library lends e-books as well as printed ones.",
    "Volcanic ash grounded flights across the region.",
    "The team won the championship for the first time in decades.",
    "Children learn languages faster than most adults.",
    "The recipe calls for two cups of flour and a pinch of salt.",
    "Jupiter has dozens of moons, the largest of which is Ganymede.",
    "The factory will hire two hundred workers next year.",
    "Tea was first grown in the hills of southern China.",
    "黄河是中国第二长的河流。",
    "这家餐馆的招牌菜是红烧肉。",
    "昨天的足球比赛以平局结束。",
    "长城修建于多个朝代，绵延数千公里。",
    "光合作用把阳光转化为植物的能量。",
    "这部电影讲述了一个关于友谊的故事。",
    "新的高铁线路将把两座城市的距离缩短到一小时。",
    "冬天的哈尔滨以冰雕闻名。",
    "股市今天早盘小幅上涨。",
    "熊猫主要以竹子为食。",
    "这座古镇保留了许多明清时期的建筑。",
    "他每天早上骑自行车去上班。",
)
